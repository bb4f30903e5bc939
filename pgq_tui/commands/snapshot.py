"""`pgq-top snapshot`: one Snapshot as JSON (`--json`, stable keys) or as a readable rich summary
(pgq_tui/render/snapshot.py), polled live or read from a recording (`--from FILE --at TIME`)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TextIO

from rich.console import Console

from pgq_tui.db import resolve_dsn
from pgq_tui.detection import QueueTarget, single_queue
from pgq_tui.errors import EXIT_OK
from pgq_tui.jsonout import emit
from pgq_tui.monitor import settle
from pgq_tui.monitor.collect import open_monitor
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.render.snapshot import render
from pgq_tui.targets import Pins

RATE_GAP_S = 1.0  # the two polls of `snapshot` are at least this far apart (rates need two)


def run_snapshot(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Poll, wait for the background counter when the poll left it something (at most `--wait`
    seconds), poll again at least RATE_GAP_S later (rates from the table need two polls), and print
    the second; past the wait, what the background still owes says so (monitor/settle.py).
    PgqError (bad DSN, no table, no privilege) propagates to main()."""
    dsn = resolve_dsn(args.dsn)
    target = single_target(dsn, args)
    cap = getattr(args, "count_cap", None)
    wait = getattr(args, "wait", settle.DEFAULT_WAIT_S)
    with open_monitor(dsn, target.model, read_only=True, **({"count_cap": cap} if cap else {})) as monitor:
        started = time.monotonic()
        monitor.collect()
        settled = monitor.settle(wait)
        time.sleep(max(0.0, RATE_GAP_S - (time.monotonic() - started)))
        snap = monitor.collect()
        if not settled:
            snap = settle.past_wait(snap, wait)
    _print(snap, args.json, out)
    return EXIT_OK


def run_snapshot_from(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """`snapshot --from FILE --at TIME`: the last recorded poll at or before TIME, printed as a live
    one is (the JSON is the same shape)."""
    from pgq_tui.history.replay import choose_queue, snapshot_at
    from pgq_tui.history.store import Recording, RecordingError

    if args.recording is None or args.at is None:
        raise RecordingError("snapshot from a recording takes both --from FILE and --at TIME")
    with Recording(args.recording) as recording:
        snap = snapshot_at(recording, choose_queue(recording, args.queue), args.at)
    _print(snap, args.json, out)
    return EXIT_OK


def _print(snap: Snapshot, as_json: bool, out: TextIO | None) -> None:
    stream = out or sys.stdout
    if as_json:
        emit(snap.to_dict(), stream)
    else:
        width = None if stream.isatty() else 120  # rich would assume 80 columns for a pipe
        Console(file=stream, highlight=False, soft_wrap=False, width=width).print(render(snap))


def single_target(dsn: str, args: argparse.Namespace) -> QueueTarget:
    """The one queue the flags name; several found is a usage error here (nobody to ask)."""
    return single_queue(dsn, **Pins.from_flags(args).args())
