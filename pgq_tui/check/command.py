"""`pgq-top check`: one Snapshot per queue, compared with thresholds, as a monitoring plugin.

Each target is detected like the dashboard does (`--kind`, `--schema/--table`, `--mapping`, or a
targets file's pins). A database holding several queues is checked queue by queue: every queue
detected (that fits the pins) is one result, named by its kind (plus schema.table when two share a
kind) in the status line, the long text and the perfdata labels, and the database-wide measures
(xmin horizon, idle transactions) are one more result, "database"; the worst decides the exit
code. A rule whose figure the queue's dialect cannot serve (no dead list, no lease) is reported as
unsupported, never as OK and never as an error.

Exit codes follow the monitoring-plugins convention, not pgq-top's own table: 0 OK, 1 WARNING,
2 CRITICAL, 3 UNKNOWN (bad flags, bad DSN, unreachable server, missing table or privilege, no answer
within --timeout). Everything goes to stdout, which is what a plugin runner reads.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields, replace
from typing import NoReturn, TextIO

from pgq_tui.check.plugin import SERVICE, as_json, render
from pgq_tui.check.rules import (
    DATABASE_WIDE,
    EXIT_CODE,
    UNKNOWN,
    CheckThresholds,
    Limit,
    Result,
    check,
)
from pgq_tui.diagnosis.chains import diagnose
from pgq_tui.diagnosis.command import seconds as threshold_seconds
from pgq_tui.diagnosis.command import thresholds_from as why_thresholds
from pgq_tui.diagnosis.findings import DEFAULTS, Thresholds, one_line
from pgq_tui.diagnosis.watch import watch_targets
from pgq_tui.errors import PgqError
from pgq_tui.fleet.poll import outcome_name
from pgq_tui.jsonout import emit
from pgq_tui.monitor.settle import add_wait_argument
from pgq_tui.targets import Target
from pgq_tui.untrusted import visible

# flag stem, CheckThresholds field, what it limits (for --help)
THRESHOLD_FLAGS = (
    ("stuck", "stuck", "stuck jobs (by the framework's own rule)"),
    ("ready-age", "ready_age_s", "seconds the oldest ready job has waited, any queue"),
    ("dead", "dead", "dead jobs (out of attempts)"),
    ("dead-tuples", "dead_tuples_ratio", "dead tuples as a multiple of the autovacuum threshold"),
    ("xmin-age", "xmin_age_s", "seconds the xmin horizon has been held (backends, prepared xacts)"),
    ("idle-tx-age", "idle_tx_age_s", "seconds the oldest idle-in-transaction session has been open"),
    ("wait-p95", "wait_p95_s", "seconds of the p95 wait over the last 5 minutes, the slowest queue"),
)
assert {f for _, f, _ in THRESHOLD_FLAGS} == {f.name for f in fields(CheckThresholds)}


def threshold(text: str) -> float | None:
    """A number, or `off` to never alert on it."""
    if text.strip().lower() in ("off", "none", ""):
        return None
    return threshold_seconds(text, "a number or 'off'")


def _shown(value: float | None) -> str:
    return "off" if value is None else f"{value:g}"


def add_arguments(p: argparse.ArgumentParser) -> None:
    defaults = CheckThresholds()
    for stem, name, what in THRESHOLD_FLAGS:
        limit: Limit = getattr(defaults, name)
        for kind in ("warn", "crit"):
            p.add_argument(
                f"--{stem}-{kind}",
                type=threshold,
                default=getattr(limit, kind),
                metavar="N",
                help=f"{'WARNING' if kind == 'warn' else 'CRITICAL'} above this many {what} "
                f"(default: {_shown(getattr(limit, kind))}; 'off' disables)",
            )
    p.add_argument(
        "--wait-p95",
        dest="wait_p95_warn",
        type=threshold,
        metavar="SECONDS",
        help="the same as --wait-p95-warn (WARNING above it; --wait-p95-crit for CRITICAL)",
    )
    p.add_argument("--json", action="store_true", help="print the verdicts and measures as JSON")
    p.add_argument(
        "--window",
        type=threshold_seconds,
        default=0.0,
        metavar="SECONDS",
        help="poll this long so the diagnosis sees undated evidence hold (default: 0, one poll: only "
        "causes the server dates, such as an xmin holder's age or a lock wait, are named)",
    )
    p.add_argument(
        "--interval", type=float, default=2.0, help="seconds between polls in --window (default: 2)"
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=15.0,
        help="give up (UNKNOWN) after this many seconds, --wait included (default: 15)",
    )
    add_wait_argument(p)

    def unknown_on_usage_error(message: str) -> NoReturn:
        # A plugin runner reads exit 2 as CRITICAL: a typo in a flag must come back UNKNOWN.
        p.print_usage(sys.stderr)
        print(f"{SERVICE} UNKNOWN: {p.prog}: {message}")
        sys.exit(EXIT_CODE[UNKNOWN])

    p.error = unknown_on_usage_error  # type: ignore[method-assign]


def thresholds_from(args: argparse.Namespace) -> CheckThresholds:
    values = {}
    for stem, name, _ in THRESHOLD_FLAGS:
        attr = stem.replace("-", "_")
        values[name] = Limit(getattr(args, f"{attr}_warn"), getattr(args, f"{attr}_crit"))
    return CheckThresholds(**values)


def check_targets(
    targets: list[Target],
    t: CheckThresholds,
    timeout_s: float,
    why: Thresholds = DEFAULTS,
    window_s: float = 0.0,
    interval_s: float = 2.0,
    wait_s: float = 0.0,
) -> list[Result]:
    """One Result per queue; a database holding several queues also gets one "database" Result for
    the measures of the whole database (xmin horizon, idle transactions), taken from its first queue
    read, instead of repeating them per queue. Each queue's diagnosis chains (over `window_s` of
    polls) name the root causes first."""
    results = []
    wait = min(wait_s, 0.8 * timeout_s)
    for watched in watch_targets(targets, window_s, max(interval_s, 0.1), timeout_s, wait):
        queues = [w.last for w in watched]
        database: Result | None = None
        for w in watched:
            o = w.last
            name = outcome_name(o, queues, len(targets) > 1)
            if isinstance(o.outcome, PgqError):
                results.append(Result(name, error=str(o.outcome), kind=o.kind, table=o.table))
                continue
            result = check(name, o.outcome, t, table=o.table)
            causes = tuple((c.level, visible(one_line(c))) for c in diagnose(w.history, why))
            result = replace(result, causes=causes)
            if o.several:
                if database is None:
                    wide = tuple(m for m in result.measures if m.label in DATABASE_WIDE)
                    where = [o.target.name] if len(targets) > 1 else []
                    database = Result("/".join([*where, "database"]), wide)
                mine = tuple(m for m in result.measures if m.label not in DATABASE_WIDE)
                result = replace(result, measures=mine)
            results.append(result)
        if database is not None:
            results.append(database)
    return results


def run_check(args: argparse.Namespace, targets: list[Target], out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    results = check_targets(
        targets,
        thresholds_from(args),
        args.timeout,
        why_thresholds(args),
        args.window,
        args.interval,
        args.wait,
    )
    code, text = render(results)
    if args.json:
        emit(as_json(results), stream)
    else:
        stream.write(text + "\n")
    return code


def unknown(message: str, out: TextIO | None = None) -> int:
    """A failure before any target was checked (bad DSN, unreadable targets file): UNKNOWN."""
    (out or sys.stdout).write(f"{SERVICE} UNKNOWN: {message}\n")
    return EXIT_CODE[UNKNOWN]
