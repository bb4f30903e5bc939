-- Ready (todo, scheduled_at null or due) and scheduled (todo, scheduled_at in the future) jobs per
-- queue, each read in the order of procrastinate's own partial index procrastinate_jobs_priority_idx_v1
-- (priority DESC, id) WHERE status = 'todo', up to %(cap1)s rows over all queues together (the index
-- has no queue column): exact while the total stays below the cap. oldest_ready_age_s (since the job
-- became due: scheduled_at, else its `deferred` event, through procrastinate_events_job_id_fkey_v1)
-- only when the ready read was complete, else NULL (never a guess from a sample).
WITH ready AS MATERIALIZED (
    SELECT j.id, j.queue_name, j.scheduled_at FROM {jobs} j
    WHERE j.status = 'todo' AND (j.scheduled_at IS NULL OR j.scheduled_at <= now())
    ORDER BY j.priority DESC, j.id LIMIT %(cap1)s
), later AS MATERIALIZED (
    SELECT j.queue_name FROM {jobs} j
    WHERE j.status = 'todo' AND j.scheduled_at > now()
    ORDER BY j.priority DESC, j.id LIMIT %(cap1)s
), complete AS (
    SELECT %(cap1)s::bigint IS NULL OR count(*) < %(cap1)s::bigint AS yes FROM ready
)
SELECT r.queue_name::text AS queue, count(*) AS ready, NULL::bigint AS scheduled,
       CASE WHEN (SELECT yes FROM complete) THEN
           extract(epoch FROM now() - least(min(r.scheduled_at),
               (SELECT min(e.at) FROM {events} e
                WHERE e.job_id = min(r.id) FILTER (WHERE r.scheduled_at IS NULL) AND e.type = 'deferred')))::float8
       END AS oldest_ready_age_s
FROM ready r GROUP BY r.queue_name
UNION ALL
SELECT l.queue_name::text, NULL, count(*), NULL FROM later l GROUP BY l.queue_name
