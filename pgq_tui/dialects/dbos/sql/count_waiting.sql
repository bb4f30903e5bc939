-- Ready (ENQUEUED) workflows per queue, through DBOS's own idx_workflow_status_in_flight_v2
-- (queue_name, status, priority, created_at) WHERE status IN ('ENQUEUED', 'PENDING'): a recursive
-- skip-scan finds the queues holding ENQUEUED rows, then each count is an index range that stops at
-- %(cap1)s rows. oldest_ready_age_s: since the oldest updated_at (epoch ms: the enqueue, or the
-- resume or end of delay that made it ENQUEUED) of a queue whose read was complete, else NULL.
-- Scheduled (DELAYED, waiting for delay_until_epoch_ms) through idx_workflow_status_delayed
-- (delay_until_epoch_ms) WHERE status = 'DELAYED', %(cap1)s rows over all queues together.
WITH RECURSIVE queues AS (
    (SELECT j.queue_name AS queue FROM {ws} j WHERE j.status = 'ENQUEUED' AND j.queue_name IS NOT NULL
     ORDER BY j.queue_name LIMIT 1)
    UNION ALL
    SELECT (SELECT j.queue_name FROM {ws} j
            WHERE j.status = 'ENQUEUED' AND j.queue_name > q.queue ORDER BY j.queue_name LIMIT 1)
    FROM queues q WHERE q.queue IS NOT NULL
), ready AS (
    SELECT q.queue, r.n, r.oldest_ms
    FROM queues q
    CROSS JOIN LATERAL (SELECT count(*) AS n, min(e.updated_at) AS oldest_ms
                        FROM (SELECT j.updated_at FROM {ws} j
                              WHERE j.queue_name = q.queue AND j.status = 'ENQUEUED'
                              LIMIT %(cap1)s) e) r
    WHERE q.queue IS NOT NULL
), later AS MATERIALIZED (
    SELECT {queue} AS queue FROM {ws} j WHERE j.status = 'DELAYED'
    ORDER BY j.delay_until_epoch_ms LIMIT %(cap1)s
)
SELECT r.queue::text AS queue, r.n AS ready, NULL::bigint AS scheduled,
       CASE WHEN %(cap1)s::bigint IS NULL OR r.n < %(cap1)s::bigint THEN
           (extract(epoch FROM now()) - r.oldest_ms / 1000.0)::float8 END AS oldest_ready_age_s
FROM ready r
UNION ALL
SELECT l.queue::text, NULL, count(*), NULL FROM later l GROUP BY l.queue
