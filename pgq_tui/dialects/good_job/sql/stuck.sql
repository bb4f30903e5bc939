-- pgq-top's stuck rule for good_job, from good_job 4.19's own rules: running (performed_at set,
-- finished_at NULL: its `running` scope), no session holds the job's advisory lock ({job_locked}),
-- and its process is not alive ({process_active}, GoodJob::Process.active): locked_by_id names a
-- process that is expired or gone, or, with no locked_by_id (a job released by Process.cleanup, or
-- written before 4.x), no good_job process is alive at all.
j.performed_at IS NOT NULL AND j.finished_at IS NULL
AND NOT {job_locked}
AND CASE WHEN j.locked_by_id IS NOT NULL
         THEN NOT EXISTS (SELECT 1 FROM {gp} p WHERE p.id = j.locked_by_id AND {process_active})
         ELSE NOT EXISTS (SELECT 1 FROM {gp} p WHERE {process_active}) END
