-- Sessions of this database waiting on a lock, each with every session blocking it
-- (pg_blocking_pids), and how long it has waited (lock_wait_s.sql: from pg_locks.waitstart, PostgreSQL
-- 14+, else from query_start).
WITH waiting AS MATERIALIZED (
    SELECT a.pid, a.query, pg_blocking_pids(a.pid) AS blockers,
           {lock_wait_s} AS wait_s
    FROM pg_stat_activity a
    WHERE a.datname = current_database() AND a.wait_event_type = 'Lock'
)
SELECT w.pid AS blocked_pid, w.query AS blocked_query, w.wait_s AS blocked_wait_s,
       b.pid AS blocking_pid, b.state AS blocking_state, b.query AS blocking_query,
       b.application_name AS blocking_application, b.backend_start AS blocking_backend_start
FROM waiting w
CROSS JOIN LATERAL unnest(w.blockers) AS bp(pid)
LEFT JOIN pg_stat_activity b ON b.pid = bp.pid
ORDER BY w.wait_s DESC NULLS LAST, w.pid, bp.pid
LIMIT %(rows)s
