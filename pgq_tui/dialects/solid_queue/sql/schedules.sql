-- Solid Queue's recurring tasks (solid_queue_recurring_tasks: key, schedule (a Fugit string: a cron
-- expression, optionally with a zone, or words such as "every hour"), class_name or command,
-- queue_name, static, description) and the newest run of each (solid_queue_recurring_executions:
-- task_key, run_at, the occurrence's time, job_id). Rails writes UTC timestamps without a zone.
SELECT t.key AS name, t.schedule AS expression, NULL::text AS timezone,
       coalesce(t.queue_name, j.queue_name) AS queue,
       e.run_at AT TIME ZONE 'UTC' AS last_run, NULL::timestamptz AS next_run,
       t.created_at AT TIME ZONE 'UTC' AS created_at,
       jsonb_build_object('class_name', t.class_name, 'command', t.command, 'static', t.static,
                          'description', t.description, 'priority', t.priority) AS details
FROM {recurring_tasks} t
LEFT JOIN LATERAL (
    SELECT x.run_at, x.job_id FROM {recurring_executions} x
    WHERE x.task_key = t.key ORDER BY x.run_at DESC LIMIT 1
) e ON true
LEFT JOIN {jobs} j ON j.id = e.job_id
ORDER BY t.key
