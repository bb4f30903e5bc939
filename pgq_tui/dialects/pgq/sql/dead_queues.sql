-- A fragment, not a statement: the CTE `dead` of every queue with dead jobs, one descent of the dead
-- index (queue, finished_at DESC NULLS LAST, id DESC) WHERE status = 'failed' per queue (a recursive
-- skip-scan). Put in where a statement names it in braces (dead_jobs.sql, queue_states.sql).
dead AS (
    (SELECT queue FROM {jobs} WHERE status = 'failed' ORDER BY queue LIMIT 1)
    UNION ALL
    SELECT (SELECT j.queue FROM {jobs} j WHERE j.status = 'failed' AND j.queue > dead.queue
            ORDER BY j.queue LIMIT 1)
    FROM dead WHERE dead.queue IS NOT NULL
)
