-- Scheduled, failed and blocked jobs, %(cap1)s rows at most over all queues together for each:
-- their execution tables have no index leading with the queue (scheduled: (scheduled_at, priority,
-- job_id); failed: (job_id); blocked: (concurrency_key, priority, job_id)), so each is read in one
-- of its own indexes' order up to the cap and split by queue. Exact while a state's total stays
-- below the cap (the engine flags it otherwise). Failed executions carry no queue: the job's.
WITH s AS (
    SELECT x.queue_name, count(*) AS n
    FROM (SELECT e.queue_name FROM {scheduled} e ORDER BY e.scheduled_at, e.priority, e.job_id
          LIMIT %(cap1)s) x
    GROUP BY x.queue_name
), f AS (
    SELECT j.queue_name, count(*) AS n
    FROM (SELECT e.job_id FROM {failed} e ORDER BY e.job_id LIMIT %(cap1)s) x
    CROSS JOIN LATERAL (SELECT j.id, j.queue_name FROM {jobs} j WHERE j.id = x.job_id LIMIT 1) j
    GROUP BY j.queue_name
), b AS (
    SELECT x.queue_name, count(*) AS n
    FROM (SELECT e.queue_name FROM {blocked} e ORDER BY e.concurrency_key, e.priority, e.job_id
          LIMIT %(cap1)s) x
    GROUP BY x.queue_name
)
SELECT coalesce(s.queue_name, f.queue_name, b.queue_name)::text AS queue,
       coalesce(s.n, 0) AS scheduled, coalesce(f.n, 0) AS dead, coalesce(b.n, 0) AS blocked
FROM s
FULL JOIN f ON f.queue_name = s.queue_name
FULL JOIN b ON b.queue_name = coalesce(s.queue_name, f.queue_name)
