-- The claim-cost probe (monitor/probe.py). Que 2.4's poll_jobs (lib/que/poller.rb) walks a queue's
-- jobs of its job_schema_version ({job_schema_version}, Que.job_schema_version) by priority, run_at,
-- id, run_at <= now(), not finished nor expired, through que_poll_idx, and tries each one's advisory
-- lock; this is that scan for one queue, LIMIT 1, no lock taken.
SELECT j.id FROM {jobs} j
WHERE j.queue = %(queue)s::text AND j.job_schema_version = {job_schema_version}
  AND j.run_at <= now() AND j.finished_at IS NULL AND j.expired_at IS NULL
ORDER BY j.priority, j.run_at, j.id
LIMIT 1
