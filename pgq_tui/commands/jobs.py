"""`pgq-top jobs --where '...'`: the jobs a search matches, newest first, and exactly what was
searched (docs/search.md). Plain text (untrusted text made visible) or `--json`. Read-only."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from typing import Any, TextIO

from pgq_tui.db import resolve_dsn
from pgq_tui.detection import single_queue
from pgq_tui.errors import EXIT_OK, EXIT_USAGE, PgqError
from pgq_tui.jsonout import emit
from pgq_tui.search.flags import WHERE_HELP, add_limit_scan
from pgq_tui.search.query import parse
from pgq_tui.search.run import ROWS, search
from pgq_tui.targets import Pins
from pgq_tui.untrusted import visible


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: object) -> None:
    p = sub.add_parser("jobs", help="list the jobs a search matches (read-only)")
    common(p, suppress=True)  # type: ignore[operator]
    p.add_argument("--where", required=True, metavar="SEARCH", help=WHERE_HELP)
    add_limit_scan(p)
    p.add_argument("--rows", type=int, default=ROWS, metavar="N", help=f"list at most N (default {ROWS})")
    p.add_argument("--json", action="store_true", help="JSON: the matches and what was searched")


def _line(r: dict[str, Any]) -> str:
    at = r["at"].isoformat(timespec="seconds") if isinstance(r["at"], datetime) else "-"
    cells = (r["id"], r["queue"] or "-", r["state"] or "?", at, r["error"] or "", r["payload"] or "")
    return "  ".join(visible(c) for c in cells)


def run_jobs(args: argparse.Namespace, out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    query = parse(args.where, datetime.now(timezone.utc).astimezone())  # bad terms: before connecting
    if args.rows < 1:
        raise PgqError("--rows wants at least 1", EXIT_USAGE)
    dsn = resolve_dsn(args.dsn)
    target = single_queue(dsn, **Pins.from_flags(args).args())
    result = search(dsn, target.model, query, limit_scan=args.limit_scan, rows=args.rows)
    if args.json:
        emit({"queue": target.label, **result.as_json()}, stream, indent=None, default=str)
        return EXIT_OK
    stream.write("id  queue  state  time  error  payload\n")
    for r in result.rows:
        stream.write(_line(r) + "\n")
    listed = f" (listed {len(result.rows):,})" if len(result.rows) < result.matched else ""
    stream.write(f"{visible(target.label)}: {result.summary()}{listed}\n")
    return EXIT_OK
