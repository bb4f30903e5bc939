"""`pgq-top init [--adopt] [--dry-run]`: pgq-top's own jobs table created, or a table it already owns
brought up to date (jobtable/schema.py decides what may change; a table pgq-top did not create is
never altered without --adopt). Every change is recorded in the audit log like any write."""

from __future__ import annotations

import argparse
from typing import Any

from pgq_tui.audit import AuditLog
from pgq_tui.commands.writes import refuse_writes
from pgq_tui.db import resolve_dsn
from pgq_tui.errors import EXIT_OK
from pgq_tui.jobtable.schema import plan
from pgq_tui.queue import JobQueue


def run_init(args: argparse.Namespace) -> int:
    if not args.dry_run:
        refuse_writes(args, "pgq-top init writes the jobs table; --dry-run only prints")
    # No statement timeout: a concurrent index build on a big table takes as long as it takes.
    table, schema = args.table or "jobs", args.schema or "public"
    with JobQueue(
        resolve_dsn(args.dsn), table, schema, worker_id="pgq-top init", statement_timeout_ms=None
    ) as q:
        if args.dry_run:
            statements = plan(q.conn, table, schema, adopt=args.adopt)
            print("\n".join(statements) if statements else "-- nothing to change")
            return EXIT_OK
        done = audited_install(q, args.dsn, args.audit_log, f"{schema}.{table}", adopt=args.adopt)
    print(f"pgq-top: {schema}.{table} is ready" + ("" if done else " (nothing to change)"))
    return EXIT_OK


def audited_install(
    q: JobQueue, dsn: str | None, audit_log: str | None, table: str, *, adopt: bool
) -> list[str]:
    """JobQueue.install, recorded in the audit log before and after like every write (docs/actions.md):
    `changed` is how many changes it made, `outcome` what they were. A start line that cannot be
    written refuses the install (PgqError, nothing changed)."""
    audit, conninfo = AuditLog.from_environment(audit_log), resolve_dsn(dsn)
    fields: dict[str, Any] = {"kind": "pgq", "action": "init --adopt" if adopt else "init", "table": table}
    audit.write(conninfo, "start", **fields)
    try:
        done: list[str] = q.install(say=lambda message: print(f"pgq-top: {message}", flush=True), adopt=adopt)
    except Exception as exc:
        audit.write(conninfo, "end", **fields, changed=None, outcome="failed", error=str(exc))
        raise
    outcome = "; ".join(done) or "nothing to change"
    audit.write(conninfo, "end", **fields, changed=len(done), outcome=outcome, error=None)
    return done
