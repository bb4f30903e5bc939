-- Running jobs (good_job's `running` scope: performed_at set, finished_at NULL), each judged by the
-- stuck rule (stuck.sql), %(cap1)s rows of each over all queues together, read through good_job's
-- index_good_jobs_on_scheduled_at (scheduled_at) WHERE finished_at IS NULL (good_job has no index on
-- performed_at: the walk reads the unfinished rows, never the finished ones).
WITH running AS MATERIALIZED (
    (SELECT j.queue_name AS queue, false AS stuck
     FROM {gj} j WHERE j.finished_at IS NULL AND j.performed_at IS NOT NULL AND NOT ({stuck})
     ORDER BY j.scheduled_at LIMIT %(cap1)s)
    UNION ALL
    (SELECT j.queue_name, true
     FROM {gj} j WHERE j.finished_at IS NULL AND j.performed_at IS NOT NULL AND ({stuck})
     ORDER BY j.scheduled_at LIMIT %(cap1)s)
)
SELECT r.queue::text AS queue, count(*) FILTER (WHERE NOT r.stuck) AS running,
       count(*) FILTER (WHERE r.stuck) AS stuck
FROM running r GROUP BY r.queue
