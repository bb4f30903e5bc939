-- Ready and scheduled jobs per queue, through good_job's own
-- index_good_jobs_on_queue_name_priority_scheduled_at_unfinished (queue_name, scheduled_at, id)
-- WHERE finished_at IS NULL: a recursive skip-scan finds the queues holding unfinished jobs, then
-- each count is an index range that stops at %(cap1)s rows. ready = good_job's `queued` scope
-- (performed_at NULL, finished_at NULL, scheduled_at <= now); scheduled = unfinished, not performed,
-- scheduled_at > now (its `scheduled` and `retried` scopes together). oldest_ready_age_s: the queue's
-- earliest scheduled_at among its ready jobs (the range's first unperformed entry). Each range is
-- ordered by (queue_name, scheduled_at), the index's order, so that the planner walks the queue's
-- range rather than good_job's index_good_jobs_on_scheduled_at across every queue.
WITH RECURSIVE queues AS (
    (SELECT j.queue_name AS queue FROM {gj} j WHERE j.finished_at IS NULL AND j.queue_name IS NOT NULL
     ORDER BY j.queue_name LIMIT 1)
    UNION ALL
    SELECT (SELECT j.queue_name FROM {gj} j
            WHERE j.finished_at IS NULL AND j.queue_name > q.queue ORDER BY j.queue_name LIMIT 1)
    FROM queues q WHERE q.queue IS NOT NULL
)
SELECT q.queue::text AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {gj} j
            WHERE j.queue_name = q.queue AND j.finished_at IS NULL AND (j.queue_name, j.scheduled_at) <= (q.queue, {utcnow})
              AND j.performed_at IS NULL LIMIT %(cap1)s) r) AS ready,
       (SELECT count(*) FROM (SELECT 1 FROM {gj} j
            WHERE j.queue_name = q.queue AND j.finished_at IS NULL AND (j.queue_name, j.scheduled_at) > (q.queue, {utcnow})
              AND j.performed_at IS NULL LIMIT %(cap1)s) r) AS scheduled,
       (SELECT extract(epoch FROM {utcnow} - j.scheduled_at)::float8 FROM {gj} j
        WHERE j.queue_name = q.queue AND j.finished_at IS NULL AND (j.queue_name, j.scheduled_at) <= (q.queue, {utcnow})
          AND j.performed_at IS NULL
        ORDER BY j.queue_name, j.scheduled_at LIMIT 1) AS oldest_ready_age_s
FROM queues q WHERE q.queue IS NOT NULL
