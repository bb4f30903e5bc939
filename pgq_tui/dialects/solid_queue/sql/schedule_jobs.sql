-- The jobs each recurring task made, newest first, linked by solid_queue_recurring_executions.job_id;
-- a job's state is the execution table that holds it (as job.sql says).
SELECT x.task_key AS schedule, j.id::text AS id,
       CASE WHEN j.finished_at IS NOT NULL THEN 'done'
            WHEN EXISTS (SELECT 1 FROM {ready} r WHERE r.job_id = j.id) THEN 'ready'
            WHEN EXISTS (SELECT 1 FROM {scheduled} s WHERE s.job_id = j.id) THEN 'scheduled'
            WHEN EXISTS (SELECT 1 FROM {claimed} c WHERE c.job_id = j.id) THEN 'running'
            WHEN EXISTS (SELECT 1 FROM {failed} f WHERE f.job_id = j.id) THEN 'dead'
            WHEN EXISTS (SELECT 1 FROM {blocked} b WHERE b.job_id = j.id) THEN 'blocked'
            ELSE 'none' END AS state,
       NULL::text AS native_state,
       j.created_at AT TIME ZONE 'UTC' AS created_at, j.finished_at AT TIME ZONE 'UTC' AS finished_at,
       'exact' AS link
FROM unnest(%(names)s::text[]) AS n(key)
CROSS JOIN LATERAL (
    SELECT e.task_key, e.job_id, e.run_at FROM {recurring_executions} e
    WHERE e.task_key = n.key ORDER BY e.run_at DESC LIMIT %(rows)s
) x
JOIN {jobs} j ON j.id = x.job_id
ORDER BY x.task_key, x.run_at DESC
