-- Jobs per queue in every state but executing, through Oban's own index
-- oban_jobs_state_queue_priority_scheduled_at_id_index (state, queue, priority, scheduled_at, id): a
-- recursive skip-scan finds each state's queues, then each count is an index range that stops at
-- %(cap1)s entries: O(queues x cap1), flat at any table size. Oban stages scheduled and retryable
-- jobs to available when due, so available is ready. oldest_ready_age_s: the first available row
-- of each priority by scheduled_at (a skip-scan over priorities); Oban's timestamps are UTC without
-- time zone, so they are compared with UTC now.
{counted}, per_queue AS (
    SELECT queue,
           coalesce(sum(n) FILTER (WHERE state = 'available'), 0) AS ready,
           least(coalesce(sum(n) FILTER (WHERE state IN ('scheduled', 'retryable')), 0), %(cap1)s) AS scheduled,
           coalesce(sum(n) FILTER (WHERE state = 'suspended'), 0) AS suspended,
           coalesce(sum(n) FILTER (WHERE state = 'discarded'), 0) AS dead,
           coalesce(sum(n) FILTER (WHERE state = 'completed'), 0) AS done,
           coalesce(sum(n) FILTER (WHERE state = 'cancelled'), 0) AS cancelled
    FROM counted GROUP BY queue
)
SELECT p.queue, p.ready, p.scheduled, p.suspended, p.dead, p.done, p.cancelled,
       CASE WHEN p.ready > 0 THEN extract(epoch FROM (now() AT TIME ZONE 'UTC') - (
           WITH RECURSIVE pr AS (
               (SELECT j.priority FROM {jobs} j WHERE j.state = 'available' AND j.queue = p.queue
                ORDER BY j.priority LIMIT 1)
               UNION ALL
               SELECT (SELECT j.priority FROM {jobs} j WHERE j.state = 'available' AND j.queue = p.queue
                         AND j.priority > pr.priority ORDER BY j.priority LIMIT 1)
               FROM pr WHERE pr.priority IS NOT NULL
           )
           SELECT min((SELECT j.scheduled_at FROM {jobs} j WHERE j.state = 'available' AND j.queue = p.queue
                         AND j.priority = pr.priority ORDER BY j.scheduled_at LIMIT 1))
           FROM pr WHERE pr.priority IS NOT NULL))::float8 END AS oldest_ready_age_s
FROM per_queue p
