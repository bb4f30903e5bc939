"""DemoSession: a private PostgreSQL plus a DemoController, started and stopped as one.

`with DemoSession() as demo:` gives `demo.dsn` and `demo.controller`; leaving the block (normally,
by Ctrl-C, or by SIGTERM/SIGHUP, which are turned into SystemExit while the session runs) stops the
load and the workers, then the server, and removes a temporary data directory. `demo_dir` keeps the
data instead, so a demo can be resumed.
"""

from __future__ import annotations

import atexit
import signal
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from pgq_tui.demo.controller import DemoController
from pgq_tui.demo.embedded import EmbeddedPostgres

_EXIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _exit_on_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds through `with DemoSession()`, which cleans up


class DemoSession:
    def __init__(
        self,
        demo_dir: Path | str | None = None,
        *,
        settings: dict[str, str] | None = None,
        **controller_options: Any,
    ) -> None:
        self.server = EmbeddedPostgres(base_dir=Path(demo_dir) if demo_dir else None, settings=settings or {})
        self.controller_options = controller_options
        self.controller: DemoController | None = None
        self.dsn = ""
        self._previous: dict[int, Any] = {}

    @property
    def data_dir(self) -> Path:
        return self.server.data_dir

    def start(self) -> DemoSession:
        if threading.current_thread() is threading.main_thread():
            for sig in _EXIT_SIGNALS:
                if signal.getsignal(sig) in (signal.SIG_DFL, None):
                    self._previous[sig] = signal.signal(sig, _exit_on_signal)
        try:
            self.dsn = self.server.start()
            self.controller = DemoController(self.dsn, **self.controller_options)
            atexit.register(self.stop)  # runs before the server's own atexit (last in, first out)
            self.controller.start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop load and workers, then the server; remove a temporary directory. Safe to call twice."""
        try:
            if self.controller is not None:
                self.controller.stop()
                self.controller = None
        finally:
            self.server.stop()
            atexit.unregister(self.stop)
            for sig, handler in self._previous.items():
                signal.signal(sig, handler)
            self._previous.clear()

    def __enter__(self) -> DemoSession:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
