"""Start the dashboard (or the demo) from parsed command-line arguments.

Everything that can fail before the first frame (bad DSN, server down, missing table, a terminal
that is not a terminal or is too small) fails here, as a PgqError that cli.main() prints as one line.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pgq_tui.errors import EXIT_OK, EXIT_TERMINAL, PgqError

MIN_WIDTH, MIN_HEIGHT = 40, 12  # below this not even the queues table and the verdict fit


def check_terminal(min_width: int = MIN_WIDTH, min_height: int = MIN_HEIGHT) -> None:
    """Refuse early, with a reason, instead of drawing garbage (Textual draws on stderr's terminal)."""
    stream = sys.__stderr__
    if stream is None or not sys.stdin.isatty() or not stream.isatty():
        raise PgqError(
            "the dashboard needs an interactive terminal; for scripts use: pgq-top snapshot --json",
            EXIT_TERMINAL,
        )
    try:
        size = os.get_terminal_size(stream.fileno())
    except OSError:
        return  # unknown size: let Textual try
    if size.columns < min_width or size.lines < min_height:
        raise PgqError(
            f"terminal is {size.columns}x{size.lines}; pgq-top needs at least {min_width}x{min_height}",
            EXIT_TERMINAL,
        )


@contextmanager
def _interruptible() -> Iterator[None]:
    """SIGTERM/SIGHUP raise KeyboardInterrupt outside the app, so `with` blocks still clean up (the demo)."""

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def open_dashboard(
    dsn: str,
    table: str,
    schema: str,
    *,
    interval: float,
    read_only: bool,
    demo: Any | None = None,
    count_cap: int | None = None,
) -> int:
    """Check the connection and table with one real poll, then run the app on a Monitor and Actions."""
    from pgq_tui.actions import Actions
    from pgq_tui.monitor.collect import Monitor
    from pgq_tui.tui.app import PgqTopApp
    from pgq_tui.tui.source import close_quietly

    caps = {} if count_cap is None else {"count_cap": count_cap}
    monitor = Monitor(dsn, table, schema, read_only=read_only, **caps)
    actions = None
    try:
        first = monitor.collect()  # raises PgqError: cannot connect, no such table, no privilege
        actions = Actions(dsn, table, schema, read_only=read_only)
        app = PgqTopApp(
            monitor,
            actions=actions,
            target=f"{schema}.{table}",
            interval=interval,
            read_only=read_only,
            demo=demo,
            initial=first,
        )
        result = app.run()
        _reinstall_interrupts()  # the app's event loop reset SIGTERM/SIGHUP on exit
        if app.return_code:  # 1 when the app crashed (Textual has printed the traceback)
            return app.return_code
        return EXIT_OK if result is None else int(result)
    finally:
        close_quietly(actions)
        close_quietly(monitor)


def _reinstall_interrupts() -> None:
    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupt)


def run_dashboard(args: argparse.Namespace) -> int:
    check_terminal()
    with _interruptible():
        if not args.demo:
            from pgq_tui.db import resolve_dsn

            return open_dashboard(
                resolve_dsn(args.dsn),
                args.table,
                args.schema,
                interval=args.interval,
                read_only=args.read_only,
                count_cap=getattr(args, "count_cap", None),
            )
        from pgq_tui.demo import DemoSession

        print("pgq-top: starting embedded PostgreSQL…", file=sys.stderr, flush=True)
        with DemoSession(args.demo_dir) as session:
            table = getattr(session.controller, "table", "jobs")
            schema = getattr(session.controller, "schema", "public")
            try:
                return open_dashboard(
                    session.dsn,
                    table,
                    schema,
                    interval=args.interval,
                    read_only=args.read_only,
                    demo=session.controller,
                    count_cap=getattr(args, "count_cap", None),
                )
            finally:
                print("pgq-top: stopping the demo (workers, load, server)…", file=sys.stderr, flush=True)
