-- One job's attempts: Solid Queue keeps only the last failure (solid_queue_failed_executions, its
-- `error` a JSON text of exception_class, message and backtrace, shown as stored); earlier attempts
-- are Active Job's retries, new jobs of their own. `executions` in the arguments numbers the attempt.
SELECT CASE WHEN left(j.arguments, 1) = '{{' THEN (j.arguments::jsonb ->> 'executions')::int END AS attempt,
       f.created_at AT TIME ZONE 'UTC' AS at, 'failed'::text AS outcome, NULL::text AS worker,
       left(f.error, 10000) AS error, NULL::text AS trace
FROM {failed} f
JOIN {jobs} j ON j.id = f.job_id
WHERE f.job_id = %(id)s::bigint
LIMIT %(shown)s
