-- Running and stuck workflows: PENDING, read through DBOS's own idx_workflow_status_pending
-- (created_at) WHERE status = 'PENDING', %(cap1)s rows over all queues together (the index has no
-- queue column), each judged by pgq-top's rule (stuck.sql: its executor not connected).
WITH pending AS MATERIALIZED (
    SELECT {queue} AS queue, ({stuck}) AS stuck
    FROM {ws} j WHERE j.status = 'PENDING'
    ORDER BY j.created_at LIMIT %(cap1)s
)
SELECT p.queue::text AS queue, count(*) FILTER (WHERE NOT p.stuck) AS running,
       count(*) FILTER (WHERE p.stuck) AS stuck
FROM pending p GROUP BY p.queue
