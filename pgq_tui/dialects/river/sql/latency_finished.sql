-- River: completed jobs of the last hour (kept 24 h by River's JobCleaner), through River's own
-- river_job_state_and_finalized_at_index (state, finalized_at); wait = attempted_at (the last
-- attempt's start) - scheduled_at, run = finalized_at - attempted_at.
SELECT j.queue, j.finalized_at AS finished_at,
       extract(epoch FROM j.attempted_at - j.scheduled_at)::float8 AS wait_s,
       extract(epoch FROM j.finalized_at - j.attempted_at)::float8 AS run_s
FROM {jobs} j
WHERE j.state = 'completed' AND j.finalized_at >= now() - interval '1 hour'
ORDER BY j.finalized_at DESC
LIMIT %(newest)s
