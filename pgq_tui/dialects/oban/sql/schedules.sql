-- Oban's cron jobs: Oban.Cron inserts each occurrence's job with meta cron: true, cron_expr,
-- cron_name and cron_tz (lib/oban/cron.ex). No table keeps the schedule: the newest job of each
-- cron_name says the expression, the zone and the last run (a scan: no index serves meta).
SELECT DISTINCT ON (j.meta ->> 'cron_name')
       j.meta ->> 'cron_name' AS name, j.meta ->> 'cron_expr' AS expression,
       coalesce(j.meta ->> 'cron_tz', 'Etc/UTC') AS timezone, j.queue,
       j.inserted_at AT TIME ZONE 'UTC' AS last_run, NULL::timestamptz AS next_run,
       NULL::timestamptz AS created_at,
       jsonb_build_object('worker', j.worker) AS details
FROM {jobs} j
WHERE j.meta ? 'cron_name'
ORDER BY j.meta ->> 'cron_name', j.inserted_at DESC
