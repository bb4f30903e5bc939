"""The SQL the actions run besides the queue's guarded writes (REQUEUE, REAP, RETRY, DISCARD live in
pgq_tui/queue/statements.py, the one place for them): read-only previews that fill a confirmation
dialog, and the session signals. Names are bound with psycopg.sql; values are parameters.

Signals are not transactional (a terminated session stays terminated even if the statement later
fails), so the signal statements take one pid at a time and the count they return is exact.
"""

from __future__ import annotations

# The role's standing for the actions: a standby or a read-only session cannot write at all, and the
# table privileges tell which writes the server will refuse. `to_regclass` is NULL for a missing table.
CHECK = """
SELECT pg_is_in_recovery() AS in_recovery,
       current_user::text AS role,
       current_setting('transaction_read_only')::bool AS read_only,
       t.oid IS NOT NULL AS table_exists,
       has_table_privilege(t.oid, 'SELECT') AS can_select,
       has_table_privilege(t.oid, 'UPDATE') AS can_update,
       has_table_privilege(t.oid, 'DELETE') AS can_delete
FROM (SELECT to_regclass(%(table)s) AS oid) t
"""

# Holders are matched like the monitor does (leases.sql): a live session of this database whose
# application_name is the worker id written in locked_by.
_HOLDERS = """
holders AS MATERIALIZED (
    SELECT application_name, min(pid) AS pid FROM pg_stat_activity
    WHERE datname = current_database() AND application_name <> ''
    GROUP BY application_name
)"""

# Expired leases among %(ids)s (NULL: all of them), as a requeue or reap would see them now.
PREVIEW_STUCK = f"""
WITH {_HOLDERS}
SELECT now() AS as_of,
       count(*) AS stuck,
       count(*) FILTER (WHERE j.attempts >= j.max_attempts) AS exhausted,
       count(*) FILTER (WHERE h.pid IS NOT NULL) AS connected,
       (array_agg(j.id ORDER BY j.id) FILTER (WHERE h.pid IS NOT NULL))[1:10] AS connected_ids,
       (array_agg(DISTINCT j.locked_by || ' (pid ' || h.pid || ')')
            FILTER (WHERE h.pid IS NOT NULL))[1:5] AS connected_holders
FROM {{jobs}} j
LEFT JOIN holders h ON h.application_name = j.locked_by
WHERE j.status = 'running' AND j.locked_until < now()
  AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
"""

PREVIEW_FAILED = """
SELECT count(*) AS found, count(*) FILTER (WHERE status = 'failed') AS failed
FROM {jobs} WHERE id = ANY(%(ids)s::bigint[])
"""

# Who the chosen pids are and whether this role may signal them: a superuser's session needs a
# superuser; anyone else's needs that role's privileges or membership in pg_signal_backend.
PREVIEW_SESSIONS = """
SELECT a.pid, a.usename::text AS "user", a.datname::text AS database,
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

# The guard is in the statement too: never our own session, and never another pgq-top session
# (monitor, actions) unless the caller asked for it explicitly.
_SIGNAL = """
SELECT {call} AS signalled
FROM pg_stat_activity a
WHERE a.pid = %(pid)s::int AND a.pid <> pg_backend_pid()
  AND (%(allow_pgq_top)s::bool OR NOT starts_with(coalesce(a.application_name, ''), 'pgq-top'))
"""

CANCEL = _SIGNAL.replace("{call}", "pg_cancel_backend(a.pid)")
# With a timeout (PostgreSQL 13+), true means the session has really exited, not just been signalled.
TERMINATE = _SIGNAL.replace("{call}", "pg_terminate_backend(a.pid, %(wait_ms)s::bigint)")
# PostgreSQL 12 has no timeout argument: true then only means "signalled".
TERMINATE_PRE_130000 = _SIGNAL.replace("{call}", "pg_terminate_backend(a.pid)")
