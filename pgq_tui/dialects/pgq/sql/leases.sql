-- The most urgent leases, valid (least time left first) and expired (longest expired first), at most
-- %(rows)s of each. Queues come from a skip-scan over the lease index (queue, locked_until)
-- WHERE status = 'running'. Two phases keep heap reads near %(rows)s however many queues there are:
-- the cutoff (the %(rows)s-th smallest locked_until) from the index alone, then the rows up to it.
-- heartbeat_at: when the holder last renewed the lease (workers renew every lease/3; NULL before).
-- Each holder is matched to a live session of this database whose application_name is locked_by.
-- payload_preview: the start of the payload for the dashboard's filter; skipped for payloads stored
-- larger than 64 kB, which would be detoasted on every poll.
-- running_queues: the shared skip-scan CTE in running_queues.sql (statements.monitor_sql puts it in).
WITH RECURSIVE {running_queues}, valid_cut AS (
    SELECT max(c.locked_until) AS locked_until FROM (
        SELECT l.locked_until FROM run
        CROSS JOIN LATERAL (SELECT j.locked_until FROM {jobs} j
                            WHERE j.status = 'running' AND j.queue = run.queue AND j.locked_until >= now()
                            ORDER BY j.locked_until LIMIT %(rows)s) l
        WHERE run.queue IS NOT NULL
        ORDER BY l.locked_until LIMIT %(rows)s) c
), expired_cut AS (
    SELECT max(c.locked_until) AS locked_until FROM (
        SELECT l.locked_until FROM run
        CROSS JOIN LATERAL (SELECT j.locked_until FROM {jobs} j
                            WHERE j.status = 'running' AND j.queue = run.queue AND j.locked_until < now()
                            ORDER BY j.locked_until LIMIT %(rows)s) l
        WHERE run.queue IS NOT NULL
        ORDER BY l.locked_until LIMIT %(rows)s) c
), valid AS (
    SELECT l.*, false AS expired FROM run
    CROSS JOIN LATERAL (SELECT j.id, j.queue, j.locked_by, j.attempts, j.max_attempts, j.locked_until, j.heartbeat_at,
                               CASE WHEN pg_column_size(j.payload) <= 65536
                                    THEN left(j.payload::text, 200) END AS payload_preview
                        FROM {jobs} j
                        WHERE j.status = 'running' AND j.queue = run.queue AND j.locked_until >= now()
                          AND j.locked_until <= (SELECT locked_until FROM valid_cut)
                        ORDER BY j.locked_until LIMIT %(rows)s) l
    WHERE run.queue IS NOT NULL
    ORDER BY l.locked_until, l.id LIMIT %(rows)s
), expired AS (
    SELECT l.*, true AS expired FROM run
    CROSS JOIN LATERAL (SELECT j.id, j.queue, j.locked_by, j.attempts, j.max_attempts, j.locked_until, j.heartbeat_at,
                               CASE WHEN pg_column_size(j.payload) <= 65536
                                    THEN left(j.payload::text, 200) END AS payload_preview
                        FROM {jobs} j
                        WHERE j.status = 'running' AND j.queue = run.queue AND j.locked_until < now()
                          AND j.locked_until <= (SELECT locked_until FROM expired_cut)
                        ORDER BY j.locked_until LIMIT %(rows)s) l
    WHERE run.queue IS NOT NULL
    ORDER BY l.locked_until, l.id LIMIT %(rows)s
), holders AS MATERIALIZED (
    SELECT application_name, min(pid) AS pid FROM pg_stat_activity
    WHERE datname = current_database() AND application_name <> ''
    GROUP BY application_name
)
SELECT x.id, x.queue, x.locked_by, x.attempts, x.max_attempts, x.locked_until, x.payload_preview,
       extract(epoch FROM x.locked_until - now())::float8 AS seconds_left,
       extract(epoch FROM now() - x.heartbeat_at)::float8 AS heartbeat_age,
       h.pid IS NOT NULL AS holder_connected, h.pid AS holder_pid, x.expired
FROM (SELECT * FROM valid UNION ALL SELECT * FROM expired) x
LEFT JOIN holders h ON h.application_name = x.locked_by
ORDER BY x.expired, x.locked_until, x.id
