-- Workflows enqueued (created_at) and finished (completed_at: SUCCESS = completed; ERROR and
-- MAX_RECOVERY_ATTEMPTS_EXCEEDED = failed) per queue in [%(since)s, %(until)s), from DBOS's own
-- epoch-millisecond times, through workflow_status_created_at_index (created_at) and
-- idx_workflow_status_completed_at (completed_at) WHERE completed_at IS NOT NULL.
WITH bounds AS (
    SELECT (extract(epoch FROM %(since)s::timestamptz) * 1000)::bigint AS lo,
           (extract(epoch FROM %(until)s::timestamptz) * 1000)::bigint AS hi
), created AS (
    SELECT {queue} AS queue, count(*) AS n FROM {ws} j, bounds b
    WHERE j.created_at >= b.lo AND j.created_at < b.hi GROUP BY 1
), ended AS (
    SELECT {queue} AS queue, count(*) FILTER (WHERE j.status = 'SUCCESS') AS completed,
           count(*) FILTER (WHERE j.status IN ('ERROR', 'MAX_RECOVERY_ATTEMPTS_EXCEEDED')) AS failed
    FROM {ws} j, bounds b
    WHERE j.completed_at IS NOT NULL AND j.completed_at >= b.lo AND j.completed_at < b.hi GROUP BY 1
)
SELECT coalesce(c.queue, e.queue)::text AS queue, coalesce(c.n, 0) AS enqueued,
       coalesce(e.completed, 0) AS completed, coalesce(e.failed, 0) AS failed
FROM created c FULL JOIN ended e ON e.queue = c.queue
