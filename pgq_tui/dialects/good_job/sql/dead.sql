-- Discarded jobs (finished with an error), newest first, at most %(rows)s, through
-- index_good_jobs_on_discarded (finished_at DESC). attempts: executions_count (one
-- good_job_executions row per attempt); the limit is the job's retry_on, in the app: NULL.
SELECT j.id::text AS id, j.queue_name::text AS queue, j.executions_count::int AS attempts,
       NULL::int AS max_attempts, j.finished_at AT TIME ZONE 'UTC' AS finished_at, j.error,
       {payload} AS payload_preview
FROM {gj} j
WHERE j.finished_at IS NOT NULL AND j.error IS NOT NULL
ORDER BY j.finished_at DESC LIMIT %(rows)s
