-- Ready and scheduled jobs per task, read only from Graphile Worker's own claim index
-- jobs_main_index (priority, run_at) INCLUDE (id, task_id, job_queue_id) WHERE is_available. The index
-- has no task column, so each state is one pass per distinct priority (a recursive skip-scan over its
-- leading key; run_at is then a range) reading up to %(cap1)s entries over all tasks together: exact
-- while the total stays below the cap. oldest_ready_age_s only when the ready read was complete (never
-- a guess from a sample). A due job of a named queue another job holds waits its turn, and counts as ready.
WITH RECURSIVE prio AS (
    (SELECT priority FROM {jobs} WHERE is_available ORDER BY priority LIMIT 1)
    UNION ALL
    SELECT (SELECT j.priority FROM {jobs} j WHERE j.is_available AND j.priority > prio.priority
            ORDER BY j.priority LIMIT 1)
    FROM prio WHERE prio.priority IS NOT NULL
), ready AS MATERIALIZED (
    SELECT x.task_id, x.run_at FROM prio
    CROSS JOIN LATERAL (SELECT j.task_id, j.run_at FROM {jobs} j
                        WHERE j.is_available AND j.priority = prio.priority AND j.run_at <= now()
                        ORDER BY j.run_at LIMIT %(cap1)s) x
    WHERE prio.priority IS NOT NULL
    LIMIT %(cap1)s
), later AS MATERIALIZED (
    SELECT x.task_id FROM prio
    CROSS JOIN LATERAL (SELECT j.task_id FROM {jobs} j
                        WHERE j.is_available AND j.priority = prio.priority AND j.run_at > now()
                        LIMIT %(cap1)s) x
    WHERE prio.priority IS NOT NULL
    LIMIT %(cap1)s
), complete AS (
    SELECT %(cap1)s::bigint IS NULL OR count(*) < %(cap1)s::bigint AS yes FROM ready
)
SELECT t.identifier AS queue, count(*) AS ready, NULL::bigint AS scheduled,
       CASE WHEN (SELECT yes FROM complete) THEN extract(epoch FROM now() - min(r.run_at))::float8 END
           AS oldest_ready_age_s
FROM ready r JOIN {tasks} t ON t.id = r.task_id
GROUP BY t.identifier
UNION ALL
SELECT t.identifier, NULL, count(*), NULL
FROM later l JOIN {tasks} t ON t.id = l.task_id
GROUP BY t.identifier
