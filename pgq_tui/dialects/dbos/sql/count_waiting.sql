-- Ready (ENQUEUED) workflows per queue, through DBOS's own idx_workflow_status_in_flight_v2
-- (queue_name, status, priority, created_at) WHERE status IN ('ENQUEUED', 'PENDING'), index-only: a
-- recursive skip-scan finds the queues holding ENQUEUED rows, then each count is an index range that
-- stops at %(cap1)s entries. oldest_ready_age_s: the queue's first workflow in DBOS's own claim order
-- by created_at (epoch ms), the minimum over the queue's priorities, each one index probe (a second
-- skip-scan, over priority), exact at any size; a resumed or delayed workflow counts from its creation.
-- Scheduled (DELAYED, waiting for delay_until_epoch_ms) through idx_workflow_status_delayed
-- (delay_until_epoch_ms) WHERE status = 'DELAYED', %(cap1)s rows over all queues together.
WITH RECURSIVE queues AS (
    (SELECT j.queue_name AS queue FROM {ws} j WHERE j.status = 'ENQUEUED' AND j.queue_name IS NOT NULL
     ORDER BY j.queue_name LIMIT 1)
    UNION ALL
    SELECT (SELECT j.queue_name FROM {ws} j
            WHERE j.status = 'ENQUEUED' AND j.queue_name > q.queue ORDER BY j.queue_name LIMIT 1)
    FROM queues q WHERE q.queue IS NOT NULL
), priorities AS (
    SELECT q.queue, (SELECT j.priority FROM {ws} j WHERE j.queue_name = q.queue AND j.status = 'ENQUEUED'
                     ORDER BY j.priority LIMIT 1) AS priority
    FROM queues q WHERE q.queue IS NOT NULL
    UNION ALL
    SELECT p.queue, (SELECT j.priority FROM {ws} j WHERE j.queue_name = p.queue AND j.status = 'ENQUEUED'
                     AND j.priority > p.priority ORDER BY j.priority LIMIT 1)
    FROM priorities p WHERE p.priority IS NOT NULL
), oldest AS (
    SELECT p.queue, min((SELECT j.created_at FROM {ws} j
                         WHERE j.queue_name = p.queue AND j.status = 'ENQUEUED' AND j.priority = p.priority
                         ORDER BY j.created_at LIMIT 1)) AS created_ms
    FROM priorities p WHERE p.priority IS NOT NULL GROUP BY p.queue
), later AS MATERIALIZED (
    SELECT {queue} AS queue FROM {ws} j WHERE j.status = 'DELAYED'
    ORDER BY j.delay_until_epoch_ms LIMIT %(cap1)s
)
SELECT q.queue::text AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {ws} j WHERE j.queue_name = q.queue AND j.status = 'ENQUEUED'
            LIMIT %(cap1)s) r) AS ready,
       NULL::bigint AS scheduled,
       (extract(epoch FROM now()) - o.created_ms / 1000.0)::float8 AS oldest_ready_age_s
FROM queues q JOIN oldest o ON o.queue = q.queue
WHERE q.queue IS NOT NULL
UNION ALL
SELECT l.queue::text, NULL, count(*), NULL FROM later l GROUP BY l.queue
