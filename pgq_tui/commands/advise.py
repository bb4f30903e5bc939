"""`pgq-top advise`: watch the jobs table for a while (polls and claim-cost probes once a second),
then print the advisor's recommendations with their reasons, and the SQL: the per-table part to run
(or apply from the dashboard, key A), the ALTER SYSTEM lines to hand to the DBA.

Read-only: it never applies anything itself. Text from the database is rendered as rich Text.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict
from typing import TextIO

from rich.console import Console

from pgq_tui.commands.snapshot import single_target
from pgq_tui.db import resolve_dsn
from pgq_tui.errors import EXIT_OK
from pgq_tui.jsonout import emit
from pgq_tui.monitor.advice import advise
from pgq_tui.monitor.collect import Monitor, open_monitor
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.render.advice import render


def measure(monitor: Monitor, seconds: float, progress: TextIO | None = None) -> Snapshot:
    """Poll once a second for `seconds` (a monitor made with probe_interval_s=1 probes each time)
    and return the last snapshot."""
    deadline = time.monotonic() + seconds
    snap = monitor.collect()
    while time.monotonic() < deadline:
        time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
        snap = monitor.collect()
        if progress is not None:
            left = max(0, round(deadline - time.monotonic()))
            progress.write(f"\rpgq-top advise: measuring {monitor.qualified}, {left:3d}s left ")
            progress.flush()
    if progress is not None:
        progress.write("\r" + " " * 60 + "\r")
    return snap


def run_advise(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """The queue the flags name (detected like `snapshot`), measured, then advised; never writes."""
    dsn = resolve_dsn(args.dsn)
    target = single_target(dsn, args)
    stream = out or sys.stdout
    progress = sys.stderr if sys.stderr.isatty() and not args.json else None
    with open_monitor(dsn, target.model, read_only=True, probe_interval_s=1.0) as monitor:
        snap = measure(monitor, args.seconds, progress)
        advice = advise(snap, monitor.schema, monitor.table)
    if args.json:
        emit(asdict(advice), stream)
        return EXIT_OK
    width = None if stream.isatty() else 120
    Console(file=stream, highlight=False, soft_wrap=False, width=width).print(render(advice, snap))
    return EXIT_OK


__all__ = ["measure", "run_advise"]
