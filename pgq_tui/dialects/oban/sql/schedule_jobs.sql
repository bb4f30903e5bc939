-- The jobs each cron entry inserted (meta cron_name), newest first (a scan, as schedules.sql).
SELECT x.cron_name AS schedule, x.id::text AS id,
       CASE x.state::text WHEN 'available' THEN 'ready' WHEN 'scheduled' THEN 'scheduled'
            WHEN 'retryable' THEN 'scheduled' WHEN 'executing' THEN 'running'
            WHEN 'discarded' THEN 'dead' WHEN 'completed' THEN 'done'
            ELSE x.state::text END AS state,
       x.state::text AS native_state, x.inserted_at AT TIME ZONE 'UTC' AS created_at,
       coalesce(x.completed_at, x.discarded_at, x.cancelled_at) AT TIME ZONE 'UTC' AS finished_at,
       'exact' AS link
FROM (
    SELECT j.*, j.meta ->> 'cron_name' AS cron_name,
           row_number() OVER (PARTITION BY j.meta ->> 'cron_name' ORDER BY j.inserted_at DESC) AS n
    FROM {jobs} j
    WHERE j.meta ->> 'cron_name' = ANY(%(names)s::text[])
) x
WHERE x.n <= %(rows)s
ORDER BY x.cron_name, x.inserted_at DESC
