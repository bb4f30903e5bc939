"""Start the dashboard (or the demo) from parsed command-line arguments.

Everything that can fail before the first frame (bad DSN, server down, missing table, a terminal
that is not a terminal or is too small) fails here, as a PgqError that cli.main() prints as one line.
"""

from __future__ import annotations

import argparse
import functools
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from pgq_tui.errors import EXIT_OK, EXIT_TERMINAL, EXIT_USAGE, PgqError
from pgq_tui.schedules.crontab import read_crontab
from pgq_tui.tui import heap

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from pgq_tui.detection import PinArgs, QueueTarget
    from pgq_tui.diagnosis.findings import Thresholds
    from pgq_tui.monitor.source import SnapshotSource
    from pgq_tui.targets import Target
    from pgq_tui.tui.ports import DemoPort

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


def choose_target(dsn: str, **pins: Unpack[PinArgs]) -> QueueTarget | None:
    """Detect the queues; one opens, several are offered in a picker (None: the user quit)."""
    from pgq_tui.detection import find_queues

    targets = find_queues(dsn, **pins)
    if len(targets) == 1:
        return targets[0]
    from pgq_tui.tui.picker import pick

    chosen = pick([t.label for t in targets], [t.match.evidence for t in targets])
    return None if chosen is None else targets[chosen]


def open_dashboard(
    dsn: str,
    target: QueueTarget,
    *,
    interval: float,
    read_only: bool,
    demo: DemoPort | None = None,
    back: bool = False,
    name: str | None = None,
    count_cap: int | None = None,
    probe_interval_s: float = 10.0,
    record: str | None = None,
    diagnosis: Thresholds | None = None,
    crontab: dict[str, str] | None = None,
) -> int:
    """Check the connection and table with one real poll, then run the app on a monitor and actions
    (and append every poll to the recording `record`, when given). `crontab`: the schedules'
    expressions a crontab file supplies (Graphile Worker)."""
    from pgq_tui.actions import Actions
    from pgq_tui.diagnosis.findings import DEFAULTS
    from pgq_tui.monitor import open_monitor
    from pgq_tui.tui.app import PgqTopApp
    from pgq_tui.tui.source import close_quietly

    caps = {} if count_cap is None else {"count_cap": count_cap}
    monitor = open_monitor(dsn, target.model, read_only=read_only, probe_interval_s=probe_interval_s, **caps)
    monitor.crontab = crontab
    actions: Actions | None = None
    source: SnapshotSource = monitor
    label = f"{name} · {target.label}" if name else target.label
    try:
        if record is not None:
            from pgq_tui.history.store import RecordingSource

            source = RecordingSource(monitor, record, label)
        first = source.collect()  # raises PgqError: cannot connect, no such table, no privilege
        actions = Actions(dsn, target.model, read_only=read_only)
        app = PgqTopApp(
            source,
            actions=actions,
            # which queue is open, e.g. "pgq · public.jobs", "seed-jobs · app.jobs" (fleet: "orders · ...")
            target=label,
            interval=interval,
            read_only=read_only,
            demo=demo,
            initial=first,
            back=back,
            diagnosis=DEFAULTS if diagnosis is None else diagnosis,
            freeze_heap=True,
        )
        try:
            result = app.run()
        finally:
            heap.thaw()
        _reinstall_interrupts()  # the app's event loop reset SIGTERM/SIGHUP on exit
        if app.return_code:  # 1 when the app crashed (Textual has printed the traceback)
            return app.return_code
        return EXIT_OK if result is None else int(result)
    finally:
        close_quietly(actions)
        close_quietly(source)
        close_quietly(monitor)


def _reinstall_interrupts() -> None:
    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupt)


def run_fleet(
    targets: Sequence[Target],
    *,
    interval: float,
    read_only: bool,
    count_cap: int | None = None,
    probe_interval_s: float = 10.0,
    diagnosis: Thresholds | None = None,
) -> int:
    """The fleet screen; enter opens a target's dashboard, whose escape comes back to the fleet.
    The count cap and probe interval hold for the fleet's polls and the dashboards it opens, the
    diagnosis thresholds for those dashboards."""
    from pgq_tui.fleet.poller import FleetPoller
    from pgq_tui.tui.app import BACK
    from pgq_tui.tui.fleet import FleetApp

    caps: dict[str, Any] = {} if count_cap is None else {"count_cap": count_cap}
    poller = FleetPoller(targets, interval=interval, probe_interval_s=probe_interval_s, **caps).start()
    cursor = 0
    notice: tuple[str, str] | None = None  # a dashboard that could not open, and why
    try:
        while True:
            fleet = FleetApp(poller, interval=interval, cursor=cursor, notice=notice)
            choice = fleet.run()
            _reinstall_interrupts()
            if fleet.return_code:
                return fleet.return_code
            if choice is None:
                return EXIT_OK
            keys = [e.key for e in poller.entries()]
            cursor, notice = keys.index(choice) if choice in keys else 0, None
            entry = poller.entry(choice)
            if entry is None:
                continue
            target = entry.target
            poller.pause()  # one poll of this target at a time: the dashboard's
            try:
                # the queue the row shows; a target not detected yet is detected now (its pins)
                queue = entry.queue or choose_target(target.dsn, **target.pins.args())
                if queue is None:
                    continue
                code = open_dashboard(
                    target.dsn,
                    queue,
                    interval=interval,
                    read_only=read_only,
                    back=True,
                    name=target.name,
                    count_cap=count_cap,
                    probe_interval_s=probe_interval_s,
                    diagnosis=diagnosis,
                )
            except PgqError as exc:  # down, no table: say so on the fleet screen, don't exit
                notice = (choice, str(exc))
                continue
            finally:
                poller.resume()
            if code != BACK:
                return code
    finally:
        poller.stop()


def run_dashboard(args: argparse.Namespace, diagnosis: Thresholds) -> int:
    """`diagnosis`: the `why` thresholds (flags over the targets file's), read by the CLI."""
    if args.demo:
        from pgq_tui.demo.embedded import bin_dir

        bin_dir()  # an install without the [demo] extra: say how to add it, before the terminal check
    targets = getattr(args, "target_list", [])
    if not args.demo and len(targets) > 1 and args.record is not None:
        raise PgqError(
            "--record records one dashboard; for several databases run "
            "pgq-top record --out FILE with the same --dsn/--targets",
            EXIT_USAGE,
        )
    check_terminal()
    dashboard = functools.partial(  # the flags every dashboard of this command opens with
        open_dashboard,
        interval=args.interval,
        read_only=args.read_only,
        count_cap=getattr(args, "count_cap", None),
        probe_interval_s=args.probe_interval,
        record=args.record,
        diagnosis=diagnosis,
        crontab=read_crontab(args.crontab) if getattr(args, "crontab", None) else None,
    )
    with _interruptible():
        if not args.demo and len(targets) > 1:
            return run_fleet(
                targets,
                interval=args.interval,
                read_only=args.read_only,
                count_cap=getattr(args, "count_cap", None),
                probe_interval_s=args.probe_interval,
                diagnosis=diagnosis,
            )
        if not args.demo:
            from pgq_tui.db import resolve_dsn
            from pgq_tui.targets import Pins

            dsn = resolve_dsn(args.dsn)
            target = choose_target(dsn, **Pins.from_flags(args).args())
            if target is None:
                return EXIT_OK
            return dashboard(dsn, target)
        from pgq_tui.demo import DemoSession

        print("pgq-top: starting embedded PostgreSQL…", file=sys.stderr, flush=True)
        with DemoSession(args.demo_dir) as session:
            table = getattr(session.controller, "table", "jobs")
            schema = getattr(session.controller, "schema", "public")
            target = choose_target(session.dsn, kind="pgq", schema=schema, table=table)
            assert target is not None  # one table named: no picker
            try:
                return dashboard(session.dsn, target, demo=session.controller)
            finally:
                print("pgq-top: stopping the demo (workers, load, server)…", file=sys.stderr, flush=True)


def run_replay(args: argparse.Namespace) -> int:
    """`pgq-top replay FILE`: the dashboard over a recording (one queue of it)."""
    from pgq_tui.history.replay import ReplaySource, choose_queue
    from pgq_tui.history.store import Recording
    from pgq_tui.tui.replay import ReplayApp

    recording = Recording(args.file)  # a bad file fails before the terminal check: one line either way
    try:
        queue = choose_queue(recording, args.queue)
        source = ReplaySource(recording, queue, args.at)
        check_terminal()
        app = ReplayApp(source, target=queue)
        result = app.run()
        if app.return_code:
            return app.return_code
        return EXIT_OK if result is None else int(result)
    finally:
        recording.close()
