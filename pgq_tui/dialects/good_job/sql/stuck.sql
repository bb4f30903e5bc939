-- pgq-top's stuck rule for good_job, from good_job 4.19's own rules: running (performed_at set,
-- finished_at NULL: its `running` scope) on the process locked_by_id names, no other session holds the
-- job's advisory lock ({job_locked}), and that process is not alive by GoodJob::Process.active
-- ({alive}): expired, its lock gone, or no row. (A job with no locked_by_id is `released`.)
j.performed_at IS NOT NULL AND j.finished_at IS NULL AND j.locked_by_id IS NOT NULL
AND NOT (j.locked_by_id = ANY ({alive}::uuid[]))
AND NOT {job_locked}
