"""Apply the advisor's per-table autovacuum settings (`ALTER TABLE ... SET (...)`): planned first
(who owns the table, what is set now), confirmed with the exact SQL, refused under --read-only.

The server-wide part (ALTER SYSTEM) is never run by pgq-top: it is the DBA's to apply.
ALTER TABLE ... SET (autovacuum_*, fillfactor) takes a SHARE UPDATE EXCLUSIVE lock: claims, inserts
and deletes do not conflict with it, a running VACUUM does (then the action's lock_timeout ends the
wait and nothing changes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pgq_tui.actions.job_plans import refused_plan
from pgq_tui.actions.model import Outcome, Plan

if TYPE_CHECKING:
    from pgq_tui.actions.actions import Actions
    from pgq_tui.monitor.advice import Advice

TUNE = "tune"

# The role may ALTER the table only as its owner (or a member of the owning role).
_OWNER = """
SELECT pg_is_in_recovery() AS in_recovery,
       current_setting('transaction_read_only')::bool AS read_only,
       c.oid IS NOT NULL AS table_exists,
       coalesce(pg_has_role(c.relowner, 'USAGE'), false) AS is_owner,
       c.relowner::regrole::text AS owner,
       coalesce(c.reloptions, '{}'::text[]) AS reloptions
FROM (SELECT to_regclass(%(table)s) AS oid) t
LEFT JOIN pg_class c ON c.oid = t.oid
"""


def plan_tune(actions: Actions, advice: Advice) -> Plan:
    """A Plan for the advice's ALTER TABLE, or a refused one (read-only, nothing to set, not owner)."""
    title = f"Apply autovacuum settings to {advice.table}"
    text = advice.table_sql or ""
    if actions.read_only:
        return refused_plan(TUNE, title, "read-only mode", text, ())
    if not advice.table_sql:
        return refused_plan(TUNE, title, "the advisor has no per-table setting to change", text, ())
    try:
        row = actions.conn.execute(_OWNER, {"table": actions.qualified_table}).fetchone()
    except Exception as exc:  # a plan is data for a dialog
        return refused_plan(TUNE, title, f"could not check the table: {exc}", text, ())
    assert row is not None
    in_recovery, read_only, exists, is_owner, owner, current = row
    if in_recovery or read_only:
        return refused_plan(TUNE, title, "the server or session accepts no writes", text, ())
    if not exists:
        return refused_plan(TUNE, title, f"table {actions.qualified_table} does not exist", text, ())
    if not is_owner:
        return refused_plan(
            TUNE, title, f"only the table's owner ({owner}) can ALTER it: ask them to run the SQL", text, ()
        )
    table_recs = [r for r in advice.recommendations if r.scope == "table"]
    changes = ", ".join(f"{r.name} {r.current} -> {r.value}" for r in table_recs)
    description = (
        f"Set {changes} on {advice.table} (now: {', '.join(current) or 'server defaults'}). "
        "Autovacuum reads them at its next visit; nothing else changes. Measured: " + advice.basis
    )
    warning = (
        "Takes a SHARE UPDATE EXCLUSIVE lock for an instant: claims and completions go on; a running "
        "VACUUM would make it wait (up to the lock timeout, then nothing changes). "
        "Server-wide settings are not applied here: see the ALTER SYSTEM lines for the DBA."
    )
    return Plan(TUNE, title, description, text, (), 1, False, False, warning)


def run_tune(actions: Actions, plan: Plan) -> Outcome:
    """Run the confirmed ALTER TABLE (the SQL the confirmation showed); never raises."""
    if actions.read_only or plan.refused:
        reason = "read-only mode" if actions.read_only else str(plan.refused)
        return Outcome(TUNE, 1, 0, f"not run: {reason}", error=reason)
    try:
        actions.conn.execute(plan.sql.encode())
    except Exception as exc:
        line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return Outcome(TUNE, 1, 0, f"settings not applied: {line}", error=line)
    return Outcome(TUNE, 1, 1, f"applied to {plan.title.rsplit(' ', 1)[-1]}: {plan.sql}")
