-- Ready and scheduled jobs per task, read only from Graphile Worker's own claim index
-- jobs_main_index (priority, run_at) INCLUDE (id, task_id, job_queue_id) WHERE is_available.
-- Per task and per distinct priority (a recursive skip-scan over the index's leading key), ready
-- (run_at <= now()) and scheduled (run_at > now()) are range scans; each count stops at %(cap1)s rows
-- per task. A due job of a named queue that another job holds waits its turn, and counts as ready.
WITH RECURSIVE prio AS (
    (SELECT priority FROM {jobs} WHERE is_available ORDER BY priority LIMIT 1)
    UNION ALL
    SELECT (SELECT j.priority FROM {jobs} j WHERE j.is_available AND j.priority > prio.priority
            ORDER BY j.priority LIMIT 1)
    FROM prio WHERE prio.priority IS NOT NULL
), priorities AS (
    SELECT priority FROM prio WHERE priority IS NOT NULL
)
SELECT t.identifier AS queue,
       (SELECT count(*) FROM (
            SELECT 1 FROM priorities p
            CROSS JOIN LATERAL (SELECT 1 FROM {jobs} j
                WHERE j.is_available AND j.priority = p.priority AND j.run_at <= now() AND j.task_id = t.id
                LIMIT %(cap1)s) x
            LIMIT %(cap1)s) r) AS ready,
       (SELECT count(*) FROM (
            SELECT 1 FROM priorities p
            CROSS JOIN LATERAL (SELECT 1 FROM {jobs} j
                WHERE j.is_available AND j.priority = p.priority AND j.run_at > now() AND j.task_id = t.id
                LIMIT %(cap1)s) x
            LIMIT %(cap1)s) s) AS scheduled,
       (SELECT extract(epoch FROM now() - min(o.run_at))::float8
        FROM priorities p
        CROSS JOIN LATERAL (SELECT j.run_at FROM {jobs} j
            WHERE j.is_available AND j.priority = p.priority AND j.run_at <= now() AND j.task_id = t.id
            ORDER BY j.run_at LIMIT 1) o) AS oldest_ready_age_s
FROM {tasks} t
