"""`pgq-top snapshot` over several targets: one JSON document (or one summary per target).

    {"targets": [{"name": "orders", "up": true, "error": null, "exit_code": 0, "snapshot": {...}}, ...]}

`snapshot` is exactly the single-target `snapshot --json` document. A target that could not be polled
has `up: false`, `snapshot: null` and its one-line error; the command then exits with that error's
code (the first such target's), after printing every target.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from pgq_tui.errors import EXIT_OK, PgqError
from pgq_tui.fleet.poll import collect_each
from pgq_tui.monitor.report import render
from pgq_tui.targets import Target

TIMEOUT_S = 15.0


def run_fleet_snapshot(targets: list[Target], *, as_json: bool, out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    outcomes = collect_each(targets, TIMEOUT_S)
    docs: list[dict[str, Any]] = []
    for target, outcome in zip(targets, outcomes, strict=True):
        failed = isinstance(outcome, PgqError)
        docs.append(
            {
                "name": target.name,
                "table": f"{target.schema}.{target.table}",
                "up": not failed,
                "error": str(outcome) if failed else None,
                "exit_code": outcome.exit_code if isinstance(outcome, PgqError) else EXIT_OK,
                "snapshot": None if isinstance(outcome, PgqError) else outcome.to_dict(),
            }
        )
    if as_json:
        json.dump({"targets": docs}, stream, indent=2)
        stream.write("\n")
    else:
        console = Console(
            file=stream, highlight=False, soft_wrap=False, width=None if stream.isatty() else 120
        )
        for target, outcome in zip(targets, outcomes, strict=True):
            console.rule(Text(f"{target.name} ({target.schema}.{target.table})"))
            console.print(
                Text(f"down: {outcome}", style="bold red")
                if isinstance(outcome, PgqError)
                else render(outcome)
            )
    return next((d["exit_code"] for d in docs if d["exit_code"] != EXIT_OK), EXIT_OK)
