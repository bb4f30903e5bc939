-- Waiting jobs per queue, through River's own river_job_prioritized_fetching_index
-- (state, queue, priority, scheduled_at, id): a recursive skip-scan finds the queues that hold
-- available, scheduled, retryable or pending jobs, then every count is an index range that stops at
-- %(cap1)s entries. `available` is read per priority (River's CHECK constraint keeps it in 1..4), so
-- due (scheduled_at <= now()) and not-yet-due rows are each one range: O(queues x cap1) at any size.
-- ready: available and due. scheduled: available but not due, scheduled, retryable (backoff).
-- pending: held for something outside River (its Pro features). oldest_ready_age_s: the first due
-- available row of each priority, by scheduled_at.
WITH RECURSIVE sq AS (
    SELECT s.state, (SELECT j.queue FROM {jobs} j WHERE j.state = s.state ORDER BY j.queue LIMIT 1) AS queue
    FROM unnest(ARRAY['available', 'scheduled', 'retryable', 'pending']::{state_type}[]) AS s(state)
    UNION ALL
    SELECT sq.state, (SELECT j.queue FROM {jobs} j WHERE j.state = sq.state AND j.queue > sq.queue
                      ORDER BY j.queue LIMIT 1)
    FROM sq WHERE sq.queue IS NOT NULL
), queues AS (
    SELECT DISTINCT queue FROM sq WHERE queue IS NOT NULL
)
SELECT q.queue,
       least(a.due, %(cap1)s) AS ready,
       least(a.later + w.scheduled + w.retryable, %(cap1)s) AS scheduled,
       w.pending,
       extract(epoch FROM now() - a.oldest_due)::float8 AS oldest_ready_age_s
FROM queues q
CROSS JOIN LATERAL (
    SELECT coalesce(sum(p.due), 0) AS due, coalesce(sum(p.later), 0) AS later, min(p.first_due) AS oldest_due
    FROM (VALUES (1::smallint), (2::smallint), (3::smallint), (4::smallint)) AS pr(priority)
    CROSS JOIN LATERAL (
        SELECT (SELECT count(*) FROM (SELECT 1 FROM {jobs} j
                    WHERE j.state = 'available' AND j.queue = q.queue AND j.priority = pr.priority
                      AND j.scheduled_at <= now() LIMIT %(cap1)s) x) AS due,
               (SELECT count(*) FROM (SELECT 1 FROM {jobs} j
                    WHERE j.state = 'available' AND j.queue = q.queue AND j.priority = pr.priority
                      AND j.scheduled_at > now() LIMIT %(cap1)s) x) AS later,
               (SELECT j.scheduled_at FROM {jobs} j
                    WHERE j.state = 'available' AND j.queue = q.queue AND j.priority = pr.priority
                      AND j.scheduled_at <= now() ORDER BY j.scheduled_at LIMIT 1) AS first_due
    ) p
) a
CROSS JOIN LATERAL (
    SELECT (SELECT count(*) FROM (SELECT 1 FROM {jobs} j WHERE j.state = 'scheduled' AND j.queue = q.queue
                LIMIT %(cap1)s) x) AS scheduled,
           (SELECT count(*) FROM (SELECT 1 FROM {jobs} j WHERE j.state = 'retryable' AND j.queue = q.queue
                LIMIT %(cap1)s) x) AS retryable,
           (SELECT count(*) FROM (SELECT 1 FROM {jobs} j WHERE j.state = 'pending' AND j.queue = q.queue
                LIMIT %(cap1)s) x) AS pending
) w
