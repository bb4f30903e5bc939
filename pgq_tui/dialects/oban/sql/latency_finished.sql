-- Oban: completed jobs of the last hour (kept until Oban's Pruner removes them), its timestamps in
-- UTC without a time zone; wait = attempted_at - scheduled_at, run = completed_at - attempted_at.
-- No Oban index serves completed_at: a scan (run in the background, bounded by its timeout).
SELECT j.queue, j.completed_at AT TIME ZONE 'UTC' AS finished_at,
       extract(epoch FROM j.attempted_at - j.scheduled_at)::float8 AS wait_s,
       extract(epoch FROM j.completed_at - j.attempted_at)::float8 AS run_s
FROM {jobs} j
WHERE j.state = 'completed' AND j.completed_at >= (now() AT TIME ZONE 'UTC') - interval '1 hour'
ORDER BY j.completed_at DESC
LIMIT %(newest)s
