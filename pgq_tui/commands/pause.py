"""`pgq-top pause|resume --queue Q`: a queue's pause, the framework's own way (docs/actions.md), through
the same actions engine as the dashboard's P and U keys.

Without --yes the plan is printed (what changes, when the workers notice, the caveat where the pause
is not durable, the SQL) and confirmed on a terminal; without a terminal it refuses. A kind without
a pause says so in one line and exits 7; so does --read-only, before any connection is opened.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from pgq_tui.actions import Actions
from pgq_tui.actions.model import Plan
from pgq_tui.audit import AuditLog
from pgq_tui.db import resolve_dsn
from pgq_tui.detection import single_queue
from pgq_tui.errors import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, PgqError
from pgq_tui.targets import Pins

COMMANDS = {
    "pause": "pause a queue: its workers stop claiming from it (the framework's own pause)",
    "resume": "resume a paused queue",
}


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: object) -> None:
    for name, text in COMMANDS.items():
        p = sub.add_parser(name, help=text)
        common(p, suppress=True)  # type: ignore[operator]
        p.add_argument("--queue", required=True, help="the queue's name, as the framework spells it")
        p.add_argument("--yes", action="store_true", help="do it without asking (scripts)")
        p.add_argument(
            "--audit-log",
            metavar="FILE",
            default=None,
            help="append a record of the write here (default: $PGQ_TOP_AUDIT_LOG, else "
            "$XDG_STATE_HOME/pgq-top/audit.jsonl; 'off' for none; docs/actions.md)",
        )


def render(plan: Plan, out: TextIO) -> None:
    out.write(f"{plan.title}\n{plan.description}\n")
    if plan.warning:
        out.write(f"warning: {plan.warning}\n")
    out.write(f"SQL:\n{plan.sql}\n")


def _confirm() -> bool:
    sys.stderr.write("Proceed? [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def run_pause(args: argparse.Namespace, out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    if args.read_only:  # read-only stays read-only: no write session is opened at all
        print(f"pgq-top: refused: read-only mode ({args.command} writes)", file=sys.stderr)
        return EXIT_REFUSED
    if not args.queue:
        raise PgqError("--queue needs a queue's name", EXIT_USAGE)
    dsn = resolve_dsn(args.dsn)
    target = single_queue(dsn, **Pins.from_flags(args).args())
    audit = AuditLog.from_environment(getattr(args, "audit_log", None))
    with Actions(dsn, target.model, audit=audit) as actions:
        plan = actions.plan_pause(args.queue) if args.command == "pause" else actions.plan_resume(args.queue)
        if plan.refused:
            print(f"pgq-top: refused: {plan.refused}", file=sys.stderr)
            return EXIT_REFUSED
        if not args.yes:
            render(plan, stream)
            stream.flush()
            if not sys.stdin.isatty():
                print("pgq-top: refused: no terminal to confirm on; pass --yes to run it", file=sys.stderr)
                return EXIT_REFUSED
            if not _confirm():
                print("pgq-top: refused: not confirmed", file=sys.stderr)
                return EXIT_REFUSED
        elif plan.warning:
            stream.write(f"warning: {plan.warning}\n")
        outcome = actions.execute(plan)
    if outcome.error:
        print(f"pgq-top: error: {outcome.message}: {outcome.error}", file=sys.stderr)
        return outcome.exit_code
    stream.write(f"pgq-top: {outcome.message} ({target.label})\n")
    return EXIT_OK
