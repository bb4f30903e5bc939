-- Ready (todo, scheduled_at null or due) and scheduled (todo, scheduled_at in the future) jobs per
-- queue: one pass over procrastinate's own partial index procrastinate_jobs_priority_idx_v1
-- (priority DESC, id) WHERE status = 'todo', so O(todo jobs). Each count is reported up to %(cap1)s.
-- oldest_ready_age_s: since the job became due (scheduled_at, else its `deferred` event, read through
-- procrastinate_events_job_id_fkey_v1 for the oldest due job only).
WITH todo AS MATERIALIZED (
    SELECT j.id, j.queue_name, j.scheduled_at, coalesce(j.scheduled_at <= now(), true) AS due
    FROM {jobs} j
    WHERE j.status = 'todo'
), per_queue AS (
    SELECT queue_name, count(*) FILTER (WHERE due) AS ready, count(*) FILTER (WHERE NOT due) AS scheduled,
           min(scheduled_at) FILTER (WHERE due) AS oldest_scheduled,
           min(id) FILTER (WHERE due AND scheduled_at IS NULL) AS oldest_unscheduled
    FROM todo GROUP BY queue_name
)
SELECT p.queue_name::text AS queue, least(p.ready, %(cap1)s) AS ready,
       least(p.scheduled, %(cap1)s) AS scheduled,
       extract(epoch FROM now() - least(p.oldest_scheduled,
           (SELECT min(e.at) FROM {events} e
            WHERE e.job_id = p.oldest_unscheduled AND e.type = 'deferred')))::float8 AS oldest_ready_age_s
FROM per_queue p
