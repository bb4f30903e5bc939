-- procrastinate's periodic defers (procrastinate_periodic_defers: task_name, periodic_id,
-- defer_timestamp (the occurrence, epoch seconds), job_id): the last run of each periodic task; its
-- cron expression lives in the app's @app.periodic(cron=...) decorator, not in the database.
SELECT d.task_name || CASE WHEN d.periodic_id <> '' THEN ':' || d.periodic_id ELSE '' END AS name,
       NULL::text AS expression, 'UTC' AS timezone, max(j.queue_name)::text AS queue,
       to_timestamp(max(d.defer_timestamp)) AS last_run, NULL::timestamptz AS next_run,
       NULL::timestamptz AS created_at,
       jsonb_build_object('task_name', d.task_name, 'periodic_id', d.periodic_id) AS details
FROM {periodic} d
LEFT JOIN {jobs} j ON j.id = d.job_id
GROUP BY d.task_name, d.periodic_id
ORDER BY 1
