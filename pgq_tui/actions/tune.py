"""The advisor's per-table autovacuum settings (`ALTER TABLE ... SET (...)`) as a Plan: pure, from the
owner check (actions/statements.py OWNER) of the queue's main relation. Autovacuum settings are per
table, not per framework: any dialect's jobs table takes them, if this role owns it.

The server-wide part (ALTER SYSTEM) is never run by pgq-top: it is the DBA's to apply.
ALTER TABLE ... SET (autovacuum_*, fillfactor) takes a SHARE UPDATE EXCLUSIVE lock: claims, inserts
and deletes do not conflict with it, a running VACUUM does (then the action's lock_timeout ends the
wait and nothing changes).
"""

from __future__ import annotations

from typing import Any

from pgq_tui.actions.job_plans import refused_plan
from pgq_tui.actions.model import Plan
from pgq_tui.monitor.advice import TABLE, Advice

TUNE = "tune"


def tune_title(advice: Advice) -> str:
    return f"Apply autovacuum settings to {advice.table}"


def tune_refusal(advice: Advice, relation: tuple[str, str]) -> str | None:
    """Why the advice cannot be applied here before asking the server, or None."""
    if not advice.table_sql:
        return "the advisor has no per-table setting to change"
    if advice.table != ".".join(relation):
        return f"the advice is for {advice.table}, but this queue's table is {'.'.join(relation)}"
    return None


def tune_plan(advice: Advice, owner: dict[str, Any]) -> Plan:
    """A Plan for the advice's ALTER TABLE from one OWNER row, or a refused one (not owner, standby)."""
    title, text = tune_title(advice), advice.table_sql or ""
    if owner["in_recovery"] or owner["read_only"]:
        return refused_plan(TUNE, title, "the server or session accepts no writes", text)
    if not owner["table_exists"]:
        return refused_plan(TUNE, title, f"table {advice.table} does not exist", text)
    if not owner["is_owner"]:
        reason = f"only the table's owner ({owner['owner']}) can ALTER it: ask them to run the SQL"
        return refused_plan(TUNE, title, reason, text)
    changes = ", ".join(
        f"{r.name} {r.current} -> {r.value}" for r in advice.recommendations if r.scope == TABLE
    )
    now = ", ".join(owner["reloptions"]) or "server defaults"
    description = (
        f"Set {changes} on {advice.table} (now: {now}). Autovacuum reads them at its next visit; "
        "nothing else changes. Measured: " + advice.basis
    )
    warning = (
        "Takes a SHARE UPDATE EXCLUSIVE lock for an instant: claims and completions go on; a running "
        "VACUUM would make it wait (up to the lock timeout, then nothing changes). "
        "Server-wide settings are not applied here: see the ALTER SYSTEM lines for the DBA."
    )
    return Plan(TUNE, title, description, text, (), 1, False, False, warning)
