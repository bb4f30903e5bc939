-- The most urgent leases: for each queue (skip-scan over the lease index) the first %(rows)s rows by
-- locked_until, valid and expired separately; then the first %(rows)s of each overall. Each holder is
-- matched to a live session of this database whose application_name is the worker id in locked_by.
WITH RECURSIVE run AS (
    (SELECT queue FROM {jobs} WHERE status = 'running' ORDER BY queue LIMIT 1)
    UNION ALL
    SELECT (SELECT j.queue FROM {jobs} j WHERE j.status = 'running' AND j.queue > run.queue
            ORDER BY j.queue LIMIT 1)
    FROM run WHERE run.queue IS NOT NULL
), valid AS (
    SELECT l.*, false AS expired FROM run
    CROSS JOIN LATERAL (SELECT j.id, j.queue, j.locked_by, j.attempts, j.max_attempts, j.locked_until
                        FROM {jobs} j WHERE j.status = 'running' AND j.queue = run.queue
                          AND j.locked_until >= now()
                        ORDER BY j.locked_until LIMIT %(rows)s) l
    WHERE run.queue IS NOT NULL
    ORDER BY l.locked_until, l.id LIMIT %(rows)s
), gone AS (
    SELECT l.*, true AS expired FROM run
    CROSS JOIN LATERAL (SELECT j.id, j.queue, j.locked_by, j.attempts, j.max_attempts, j.locked_until
                        FROM {jobs} j WHERE j.status = 'running' AND j.queue = run.queue
                          AND j.locked_until < now()
                        ORDER BY j.locked_until LIMIT %(rows)s) l
    WHERE run.queue IS NOT NULL
    ORDER BY l.locked_until, l.id LIMIT %(rows)s
), holders AS MATERIALIZED (
    SELECT application_name, min(pid) AS pid FROM pg_stat_activity
    WHERE datname = current_database() AND application_name <> ''
    GROUP BY application_name
)
SELECT x.id, x.queue, x.locked_by, x.attempts, x.max_attempts, x.locked_until,
       extract(epoch FROM x.locked_until - now())::float8 AS seconds_left,
       h.pid IS NOT NULL AS holder_connected, h.pid AS holder_pid, x.expired
FROM (SELECT * FROM valid UNION ALL SELECT * FROM gone) x
LEFT JOIN holders h ON h.application_name = x.locked_by
ORDER BY x.expired, x.locked_until, x.id
