"""`pgq-top advise`: watch the jobs table for a while (polls and claim-cost probes once a second),
then print the advisor's recommendations with their reasons, and the SQL: the per-table part to run
(or apply from the dashboard, key A), the ALTER SYSTEM lines to hand to the DBA.

Read-only: it never applies anything itself. Text from the database is rendered as rich Text.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from typing import TextIO

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from pgq_tui.db import resolve_dsn
from pgq_tui.errors import EXIT_OK
from pgq_tui.monitor.advice import Advice, advise
from pgq_tui.monitor.collect import Monitor, open_monitor
from pgq_tui.monitor.health import bloat_verdicts
from pgq_tui.monitor.provenance import index_notes
from pgq_tui.monitor.report import single_target
from pgq_tui.monitor.snapshot import Snapshot


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


def render(advice: Advice, snap: Snapshot) -> Group:
    parts: list[object] = [
        Text.assemble(("advice for ", "bold"), (advice.table, "bold"), ("  measured: ", "dim"), advice.basis)
    ]
    for v in bloat_verdicts(snap):
        parts.append(Text(f"{v.level}: {v.message}", style="bold red" if v.level == "crit" else "yellow"))
    if advice.recommendations:
        t = Table(expand=False, show_lines=True)
        for col in ("scope", "setting", "now", "recommended", "why"):
            t.add_column(col, overflow="fold")
        for r in advice.recommendations:
            t.add_row(r.scope, r.name, Text(r.current), Text(r.value, style="bold"), Text(r.reason))
        parts.append(t)
    else:
        parts.append(Text("no setting to change", style="green"))
    for note in advice.notes:
        parts.append(Text(f"note: {note}", style="yellow"))
    for note in index_notes(snap):  # optional: the figures are read by scans meanwhile
        parts.append(Text(f"index: {note}", style="dim"))
    if advice.table_sql:
        parts.append(Text("\n-- per table (pgq-top can apply it: dashboard key A)", style="dim"))
        parts.append(Text(advice.table_sql + ";"))
    if advice.server_sql:
        parts.append(Text("\n-- server-wide, for the DBA (superuser):", style="dim"))
        parts.extend(Text(line + ";") for line in advice.server_sql)
    return Group(*parts)  # type: ignore[arg-type]


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
        json.dump(asdict(advice), stream, indent=2)
        stream.write("\n")
        return EXIT_OK
    width = None if stream.isatty() else 120
    Console(file=stream, highlight=False, soft_wrap=False, width=width).print(render(advice, snap))
    return EXIT_OK


__all__ = ["measure", "render", "run_advise"]
