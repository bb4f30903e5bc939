-- pg-boss: completed jobs of the last hour (until its maintenance archives or deletes them); wait =
-- started_on - start_after, run = completed_on - started_on.
SELECT j.name AS queue, j.completed_on AS finished_at,
       extract(epoch FROM j.started_on - j.start_after)::float8 AS wait_s,
       extract(epoch FROM j.completed_on - j.started_on)::float8 AS run_s
FROM {job} j
WHERE j.state = 'completed' AND j.completed_on >= now() - interval '1 hour'
ORDER BY j.completed_on DESC
LIMIT %(newest)s
