"""The SQL the actions engine runs itself; every job action's preview and guarded write come from the
queue's dialect (its ActionSpecs). Here: the role's standing, the session previews and signals, and
the table owner check of the advisor's ALTER TABLE. Names are bound with psycopg.sql; values are
parameters.

Signals are not transactional (a terminated session stays terminated even if the statement later
fails), so the signal statements take one pid at a time and the count they return is exact.
"""

from __future__ import annotations

# The role's standing for the actions: a standby or a read-only session cannot write at all, and the
# table privileges tell which writes the server will refuse. `to_regclass` is NULL for a missing table.
# Run in the preview's transaction: `as_of` is the now() the preview saw, the plan's `before`.
CHECK = """
SELECT now() AS as_of, pg_is_in_recovery() AS in_recovery,
       current_user::text AS role,
       current_setting('transaction_read_only')::bool AS read_only,
       t.oid IS NOT NULL AS table_exists,
       has_table_privilege(t.oid, 'SELECT') AS can_select,
       has_table_privilege(t.oid, 'UPDATE') AS can_update,
       has_table_privilege(t.oid, 'DELETE') AS can_delete
FROM (SELECT to_regclass(%(table)s) AS oid) t
"""

# Who the chosen pids are and whether this role may signal them: a superuser's session needs a
# superuser; anyone else's needs that role's privileges or membership in pg_signal_backend.
PREVIEW_SESSIONS = """
SELECT a.pid, a.backend_start, a.usename::text AS "user", a.datname::text AS database,
       a.application_name AS application, a.state, a.backend_type,
       a.pid = pg_backend_pid() AS is_self,
       starts_with(coalesce(a.application_name, ''), 'pgq-top') AS is_pgq_top,
       CASE WHEN a.usesysid IS NULL OR r.rolsuper THEN me.rolsuper
            ELSE pg_has_role(a.usesysid, 'USAGE') OR pg_has_role('pg_signal_backend', 'USAGE')
       END AS can_signal
FROM pg_stat_activity a
LEFT JOIN pg_roles r ON r.oid = a.usesysid
CROSS JOIN (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) me
WHERE a.pid = ANY(%(pids)s::int[])
ORDER BY a.pid
"""

# The guard is in the statement too: the very session that was planned (a pid is reused once its
# session ends: the pid and its backend_start name one session), never our own session, and never
# another pgq-top session (monitor, actions) unless the caller asked for it explicitly. A NULL
# backend_start is one this role may not see (pg_stat_activity hides another role's without
# pg_read_all_stats): then the pid is all there is to check.
_SIGNAL = """
SELECT {call} AS signalled
FROM pg_stat_activity a
WHERE a.pid = %(pid)s::int AND coalesce(a.backend_start = %(backend_start)s::timestamptz, true)
  AND a.pid <> pg_backend_pid()
  AND (%(allow_pgq_top)s::bool OR NOT starts_with(coalesce(a.application_name, ''), 'pgq-top'))
"""

CANCEL = _SIGNAL.replace("{call}", "pg_cancel_backend(a.pid)")
# With a timeout (PostgreSQL 13+), true means the session has really exited, not just been signalled.
TERMINATE = _SIGNAL.replace("{call}", "pg_terminate_backend(a.pid, %(wait_ms)s::bigint)")
# PostgreSQL 12 has no timeout argument: true then only means "signalled".
TERMINATE_PRE_130000 = _SIGNAL.replace("{call}", "pg_terminate_backend(a.pid)")

# The advisor's ALTER TABLE: the role may ALTER the table only as its owner (or a member of the
# owning role); `reloptions` are the per-table settings in force now.
OWNER = """
SELECT pg_is_in_recovery() AS in_recovery,
       current_setting('transaction_read_only')::bool AS read_only,
       c.oid IS NOT NULL AS table_exists,
       coalesce(pg_has_role(c.relowner, 'USAGE'), false) AS is_owner,
       c.relowner::regrole::text AS owner,
       coalesce(c.reloptions, '{}'::text[]) AS reloptions
FROM (SELECT to_regclass(%(table)s) AS oid) t
LEFT JOIN pg_class c ON c.oid = t.oid
"""
