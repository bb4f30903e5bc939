-- The jobs each periodic task deferred, newest first, linked by procrastinate_periodic_defers.job_id.
SELECT x.name AS schedule, j.id::text AS id,
       CASE j.status::text
            WHEN 'todo' THEN CASE WHEN coalesce(j.scheduled_at <= now(), true) THEN 'ready' ELSE 'scheduled' END
            WHEN 'doing' THEN 'running'
            WHEN 'failed' THEN 'dead'
            WHEN 'succeeded' THEN 'done'
            ELSE j.status::text END AS state,
       j.status::text AS native_state, to_timestamp(x.defer_timestamp) AS created_at,
       NULL::timestamptz AS finished_at, 'exact' AS link
FROM (
    SELECT d.task_name || CASE WHEN d.periodic_id <> '' THEN ':' || d.periodic_id ELSE '' END AS name,
           d.job_id, d.defer_timestamp,
           row_number() OVER (PARTITION BY d.task_name, d.periodic_id ORDER BY d.defer_timestamp DESC) AS n
    FROM {periodic} d
) x
JOIN {jobs} j ON j.id = x.job_id
WHERE x.n <= %(rows)s AND x.name = ANY(%(names)s::text[])
ORDER BY x.name, x.defer_timestamp DESC
