"""Leaving cleanly when the terminal goes away (an SSH connection drops, a window closes): SIGHUP.

Textual writes to the terminal from a writer thread fed by a bounded queue (30 writes). Once the
terminal is gone a write fails and that thread dies; the app's next writes, and its shutdown, then
block forever on the full queue. We saw it happen: pgq-top lingered with its database sessions open
(a demo would never be torn down). And a hang-up often comes with a SIGCONT, on which Textual
"resumes": it starts a fresh writer thread on the dead terminal, which dies the same way.
So on SIGHUP: no more resuming, make writes harmless, then exit.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from queue import Queue
from typing import Any


def _drain(queue: Queue[Any]) -> None:
    while True:
        if queue.get() is None:  # the driver's stop(): hand it on so the writer thread (if alive) ends
            queue.put(None)
            return


def release_writer(driver: Any) -> None:
    """Consume whatever the driver's writer thread can no longer write (Textual internals, if present)."""
    queue = getattr(getattr(driver, "_writer_thread", None), "_queue", None)
    if isinstance(queue, Queue):
        threading.Thread(target=_drain, args=(queue,), daemon=True, name="pgq-top-hangup").start()


def install(app: Any) -> Any:
    """A Python-level handler, not loop.add_signal_handler: it must run even while the event loop is
    itself stuck in a blocked write. Returns the previous handler, to put back on unmount."""
    loop = asyncio.get_running_loop()

    def on_hangup(signum: int, frame: Any) -> None:
        # CPython runs pending handlers in signal-number order, so a SIGCONT that came with this
        # SIGHUP finds its handler gone.
        signal.signal(signal.SIGCONT, signal.SIG_DFL)
        release_writer(getattr(app, "_driver", None))
        loop.call_soon_threadsafe(app.exit)

    return signal.signal(signal.SIGHUP, on_hangup)
