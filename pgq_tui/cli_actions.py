"""`pgq-top requeue|retry|discard|cancel`: job actions for runbooks and scripts, through the same actions
module as the dashboard's keys.

Without --yes the plan is printed (what changes, at most how many rows, the SQL) and confirmed on a
terminal; without a terminal the command refuses. Exit 0 when the action ran, a documented non-zero
code with one line otherwise.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timezone
from typing import TextIO

from pgq_tui.actions import Actions
from pgq_tui.actions.actions import Progress
from pgq_tui.actions.model import Plan
from pgq_tui.audit import AuditLog
from pgq_tui.db import resolve_dsn
from pgq_tui.detection import find_queues
from pgq_tui.dialects.contract import ActionKind, JobId
from pgq_tui.errors import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, PgqError
from pgq_tui.queue.jobqueue import BATCH
from pgq_tui.search.compile import compile_query
from pgq_tui.search.flags import WHERE_HELP, add_limit_scan
from pgq_tui.search.query import Query, parse
from pgq_tui.search.run import search, still_matching
from pgq_tui.untrusted import visible

COMMANDS = {
    "requeue": (ActionKind.REQUEUE, "--stuck", "hand stuck jobs back to the queue (the framework's rescue)"),
    "retry": (ActionKind.RETRY, "--dead", "run dead jobs again"),
    "discard": (ActionKind.DISCARD, "--dead", "remove dead jobs for good"),
    "cancel": (ActionKind.CANCEL, "--waiting", "cancel waiting jobs (frameworks with a cancelled state)"),
}


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: object) -> None:
    for name, (_, selector, text) in COMMANDS.items():
        p = sub.add_parser(name, help=text)
        common(p, suppress=True)  # type: ignore[operator]
        which = p.add_mutually_exclusive_group(required=True)
        which.add_argument(
            selector, dest="every", action="store_true", help=f"every job that is {selector[2:]}"
        )
        which.add_argument("--ids", help="comma-separated job ids, e.g. 12,15")
        which.add_argument("--where", metavar="SEARCH", help=f"every job a search matches: {WHERE_HELP}")
        p.add_argument("--queue", help="only jobs of this queue")
        p.add_argument("--yes", action="store_true", help="do it without asking (scripts)")
        add_limit_scan(p)
        p.add_argument(
            "--batch", type=_batch, default=BATCH, metavar="N", help=f"rows per transaction (default {BATCH})"
        )
        p.add_argument(
            "--audit-log",
            metavar="FILE",
            default=None,
            help="append a record of the write here (default: $PGQ_TOP_AUDIT_LOG, else "
            "$XDG_STATE_HOME/pgq-top/audit.jsonl; 'off' for none; docs/actions.md)",
        )


def _batch(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"want a positive number of rows, not {value!r}")
    return int(value)


def parse_ids(text: str) -> list[JobId]:
    """'1, 2,3' -> [1, 2, 3]; non-numeric ids (uuids) stay text.

    >>> parse_ids("1, 2,3"), parse_ids("a1b2")
    ([1, 2, 3], ['a1b2'])
    """
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise PgqError("--ids needs at least one id, e.g. --ids 12,15", EXIT_USAGE)
    return [int(t) if t.lstrip("-").isdigit() else t for t in items]


def render_plan(plan: Plan, out: TextIO) -> None:
    out.write(f"{plan.title}\n{plan.description}\n")
    if plan.warning:
        out.write(f"warning: {plan.warning}\n")
    out.write(f"at most {plan.count} rows; SQL:\n{plan.sql}\n")


def _confirm(plan: Plan) -> bool:
    prompt = (
        "Type 'yes' to proceed: " if plan.destructive or plan.needs_second_confirmation else "Proceed? [y/N] "
    )
    sys.stderr.write(prompt)
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer == "yes" if plan.destructive or plan.needs_second_confirmation else answer in ("y", "yes")


def progress_line(verb: str, done: int, total: int, elapsed_s: float, width: int = 20) -> str:
    """A terminal's progress line: bar, done of total, rate and ETA (the total is the plan's, so
    approximate: jobs that changed meanwhile are skipped).

    >>> progress_line("retried", 3_000, 40_000, 2.0)
    '[#-------------------] retried 3,000 of ~40,000 · 1,500/s · ETA 25 s'
    >>> progress_line("retried", 0, 10, 0.0)
    '[--------------------] retried 0 of ~10'
    """
    filled = min(width, width * done // total) if total else width
    line = f"[{'#' * filled}{'-' * (width - filled)}] {verb} {done:,} of ~{total:,}"
    if done and elapsed_s > 0:
        rate = done / elapsed_s
        line += f" · {rate:,.0f}/s · ETA {max(0.0, (total - done) / rate):.0f} s"
    return line


def _progress(verb: str) -> Progress:
    """Per batch on stderr: a bar with rate and ETA, redrawn in place on a terminal; elsewhere one
    plain line per batch ("pgq-top: retried 3,000 of ~40,000")."""
    tty, started = sys.stderr.isatty(), time.monotonic()

    def show(done: int, total: int) -> None:
        if tty:
            line = progress_line(verb, done, total, time.monotonic() - started)
            sys.stderr.write(f"\r{line}\x1b[K")
        else:
            sys.stderr.write(f"pgq-top: {verb} {done:,} of ~{total:,}\n")
        sys.stderr.flush()

    return show


def run_action(args: argparse.Namespace, out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    kind, _, _ = COMMANDS[args.command]
    ids = parse_ids(args.ids) if args.ids else None
    where = getattr(args, "where", None)
    query: Query | None = None
    if where is not None:
        query = parse(where, datetime.now(timezone.utc).astimezone())  # a bad term: before connecting
        if args.read_only:  # read-only stays read-only: no write session is opened at all
            print("pgq-top: refused: read-only mode (search with: pgq-top jobs --where ...)", file=sys.stderr)
            return EXIT_REFUSED
    if args.read_only:  # before any connection: an unreachable server must not hide the refusal
        print("pgq-top: refused: read-only mode", file=sys.stderr)
        return EXIT_REFUSED
    dsn = resolve_dsn(args.dsn)
    targets = find_queues(
        dsn,
        kind=args.kind,
        schema=args.schema,
        table=args.table,
        mapping=args.mapping,
        dead_reads=getattr(args, "dead_reads", None),
        settings=getattr(args, "dialect_settings", None),
    )
    if len(targets) > 1:
        found = "; ".join(t.label for t in targets)
        raise PgqError(
            f"several queues found ({found}): pick one with --kind, --schema or --table", EXIT_USAGE
        )
    (target,) = targets
    recheck, searched = None, ""
    if query is not None:
        compiled = compile_query(query, target.model)  # a term this kind cannot serve: before writing
        result = search(dsn, target.model, query, limit_scan=args.limit_scan, rows=1, all_ids=True)
        searched = f"search {visible_where(where)}: {result.summary()}"
        stream.write(f"{searched}\n")
        if not result.ids:
            stream.write("pgq-top: no job matches: nothing to do\n")
            return EXIT_OK
        ids, recheck = list(result.ids), still_matching(compiled)
    audit = AuditLog.from_environment(getattr(args, "audit_log", None))
    batch = getattr(args, "batch", BATCH)
    with Actions(dsn, target.model, read_only=args.read_only, audit=audit, batch=batch) as actions:
        plan = actions.plan(kind, ids, args.queue)
        if plan.refused:
            print(f"pgq-top: refused: {plan.refused}", file=sys.stderr)
            return EXIT_REFUSED
        if not args.yes:
            if recheck is not None:
                stream.write(f"each batch re-checks the search on its locked rows: {compiled.shown()}\n")
            render_plan(plan, stream)
            stream.flush()
            if not sys.stdin.isatty():
                print("pgq-top: refused: no terminal to confirm on; pass --yes to run it", file=sys.stderr)
                return EXIT_REFUSED
            if not _confirm(plan):
                print("pgq-top: refused: not confirmed", file=sys.stderr)
                return EXIT_REFUSED
        progress = _progress(VERBS[args.command]) if recheck is not None else None
        outcome = actions.execute(plan, where=where, recheck=recheck, progress=progress)
        if progress is not None and sys.stderr.isatty():
            sys.stderr.write("\n")
    if outcome.error:
        print(f"pgq-top: error: {outcome.message}: {outcome.error}", file=sys.stderr)
        return outcome.exit_code
    stream.write(f"pgq-top: {outcome.message} ({target.label})\n")
    return EXIT_OK


VERBS = {"requeue": "requeued", "retry": "retried", "discard": "discarded", "cancel": "cancelled"}


def visible_where(where: str | None) -> str:
    return repr(visible(where or ""))
