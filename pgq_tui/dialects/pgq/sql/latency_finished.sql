-- pgq-top's queue: done jobs of the last hour (kept only by workers run with --keep), through
-- <table>_done_idx (finished_at) WHERE status = 'done'; wait = started_at (the claim) - run_at,
-- run = finished_at - started_at. A job's last attempt only (a retry's run_at is its backoff's end).
SELECT j.queue, j.finished_at,
       extract(epoch FROM j.started_at - j.run_at)::float8 AS wait_s,
       extract(epoch FROM j.finished_at - j.started_at)::float8 AS run_s
FROM {jobs} j
WHERE j.status = 'done' AND j.finished_at >= now() - interval '1 hour'
ORDER BY j.finished_at DESC
LIMIT %(newest)s
