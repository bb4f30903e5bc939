"""`pgq-top snapshot` over several targets: one JSON document (or one summary per queue).

    {"targets": [{"name": "orders", "target": "orders", "kind": "pgq", "table": "public.jobs",
                  "up": true, "error": null, "exit_code": 0, "snapshot": {...}}, ...]}

One entry per queue detected in each target (`name` adds the queue's kind when a database holds
several, as `check` does); `snapshot` is exactly the single-target `snapshot --json` document. A
target or queue that could not be polled has `up: false`, `snapshot: null` and its one-line error; the
command then exits with that error's code (the first such), after printing every one.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from pgq_tui.errors import EXIT_OK, PgqError
from pgq_tui.fleet.poll import collect_each, outcome_name
from pgq_tui.jsonout import emit
from pgq_tui.render.snapshot import render
from pgq_tui.targets import Target

TIMEOUT_S = 15.0


def run_fleet_snapshot(
    targets: list[Target], *, as_json: bool, out: TextIO | None = None, wait_s: float = 0.0
) -> int:
    stream = out or sys.stdout
    polled = [
        (outcome_name(o, queues, True), o)
        for queues in collect_each(targets, TIMEOUT_S + wait_s, wait_s)
        for o in queues
    ]
    docs: list[dict[str, Any]] = []
    for name, o in polled:
        failed = isinstance(o.outcome, PgqError)
        docs.append(
            {
                "name": name,
                "target": o.target.name,
                "kind": o.kind,
                "table": o.table,
                "up": not failed,
                "error": str(o.outcome) if failed else None,
                "exit_code": o.outcome.exit_code if isinstance(o.outcome, PgqError) else EXIT_OK,
                "snapshot": None if isinstance(o.outcome, PgqError) else o.outcome.to_dict(),
            }
        )
    if as_json:
        emit({"targets": docs}, stream)
    else:
        console = Console(
            file=stream, highlight=False, soft_wrap=False, width=None if stream.isatty() else 120
        )
        for name, o in polled:
            where = " ".join(p for p in (o.kind, o.table) if p)
            console.rule(Text(f"{name} ({where})" if where else name))
            console.print(
                Text(f"down: {o.outcome}", style="bold red")
                if isinstance(o.outcome, PgqError)
                else render(o.outcome)
            )
    return next((d["exit_code"] for d in docs if d["exit_code"] != EXIT_OK), EXIT_OK)
