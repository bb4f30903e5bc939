"""`pgq-top schedules`: every periodic schedule the queue's framework keeps in the database, with
the expression in words, the last run, the next due run, whether it is late and the jobs it made
(docs/schedules.md). A table, or `--json`; read-only."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from pgq_tui.db import resolve_dsn
from pgq_tui.db.connect import connect
from pgq_tui.detection import single_queue
from pgq_tui.diagnosis.command import thresholds_from
from pgq_tui.errors import EXIT_OK, EXIT_USAGE, PgqError
from pgq_tui.jsonout import emit
from pgq_tui.monitor.schedules import JOB_ROWS, read_now
from pgq_tui.schedules.crontab import read_crontab
from pgq_tui.schedules.view import HEADERS, cells, notes, report_json
from pgq_tui.targets import Pins
from pgq_tui.untrusted import visible


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: object) -> None:
    p = sub.add_parser("schedules", help="list the framework's periodic schedules, and which are late")
    common(p, suppress=True)  # type: ignore[operator]
    p.add_argument("--json", action="store_true", help="JSON: every figure, null with a reason when unknown")
    p.add_argument(
        "--rows", type=int, default=JOB_ROWS, metavar="N", help=f"recent jobs per schedule ({JOB_ROWS})"
    )
    p.add_argument(
        "--crontab",
        metavar="FILE",
        default=None,
        help="Graphile Worker's crontab file: the expressions its known_crontabs rows lack",
    )
    from pgq_tui.diagnosis.command import add_threshold_arguments

    add_threshold_arguments(p)


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def run_schedules(args: argparse.Namespace, out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    if args.rows < 0:
        raise PgqError("--rows wants 0 or more", EXIT_USAGE)
    threshold = thresholds_from(args).schedule_late_s
    crontab = read_crontab(args.crontab) if args.crontab else None
    dsn = resolve_dsn(args.dsn)
    target = single_queue(dsn, **Pins.from_flags(args).args())
    with connect(
        dsn, application_name="pgq-top schedules", read_only=True, statement_timeout_ms=5000
    ) as conn:
        report = read_now(conn, target.model, rows=args.rows, crontab=crontab)
    if args.json:
        emit(report_json(report, threshold, target.label), stream, indent=None, default=str)
        return EXIT_OK
    stream.write(f"{visible(target.label)}: ")
    if not report.supported:
        stream.write(f"{visible(report.reason or 'no schedules')}\n")
        return EXIT_OK
    stream.write(f"{len(report.schedules)} schedule{'s' * (len(report.schedules) != 1)}\n")
    if report.schedules:
        rows = [HEADERS, *(tuple(visible(c) for c in cells(s, threshold)) for s in report.schedules)]
        stream.write("\n".join(_table(rows)) + "\n")
    for line in notes(report):
        stream.write(f"  {visible(line)}\n")
    return EXIT_OK
