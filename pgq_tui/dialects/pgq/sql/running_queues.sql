-- A fragment, not a statement: the CTE `run` of every queue with running jobs, one descent of the
-- lease index (queue, locked_until) WHERE status = 'running' per queue (a recursive skip-scan).
-- Put in where a statement names it in braces (leases.sql, queue_states.sql).
run AS (
    (SELECT queue FROM {jobs} WHERE status = 'running' ORDER BY queue LIMIT 1)
    UNION ALL
    SELECT (SELECT j.queue FROM {jobs} j WHERE j.status = 'running' AND j.queue > run.queue
            ORDER BY j.queue LIMIT 1)
    FROM run WHERE run.queue IS NOT NULL
)
