"""The terminal going away must not leave pgq-top blocked on writes nobody can take."""

from __future__ import annotations

import threading
from types import SimpleNamespace

from textual.drivers._writer_thread import MAX_QUEUED_WRITES, WriterThread

from pgq_tui.tui.hangup import release_writer


class HungUpTerminal:
    def write(self, text: str) -> None:
        raise OSError(5, "Input/output error")  # what a write to a hung-up tty returns

    def flush(self) -> None:
        pass


def test_writes_and_shutdown_do_not_block_after_the_writer_died() -> None:
    previous = threading.excepthook
    threading.excepthook = lambda args: None  # the writer thread's death is the point of the test
    try:
        writer = WriterThread(HungUpTerminal())  # type: ignore[arg-type]
        writer.start()
        writer.write("frame")
        writer.join(2)
        assert not writer.is_alive()
        for _ in range(MAX_QUEUED_WRITES):
            writer.write("frame")  # the queue is now full: one more write would block forever

        release_writer(SimpleNamespace(_writer_thread=writer))
        done = threading.Event()

        def more_frames_then_shutdown() -> None:
            for _ in range(3 * MAX_QUEUED_WRITES):
                writer.write("frame")
            writer.stop()
            done.set()

        threading.Thread(target=more_frames_then_shutdown, daemon=True).start()
        assert done.wait(5), "writes or the driver's stop() blocked"
    finally:
        threading.excepthook = previous


async def test_sighup_stops_textual_from_resuming_and_exits() -> None:
    import asyncio
    import os
    import signal

    from pgq_tui.tui.hangup import install

    exited = asyncio.Event()
    app = SimpleNamespace(exit=exited.set, _driver=None)
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGHUP, signal.SIGCONT)}
    signal.signal(signal.SIGCONT, lambda *_: None)  # stands in for Textual's "resume" handler
    try:
        install(app)
        os.kill(os.getpid(), signal.SIGHUP)
        await asyncio.wait_for(exited.wait(), 5)
        assert signal.getsignal(signal.SIGCONT) == signal.SIG_DFL
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
