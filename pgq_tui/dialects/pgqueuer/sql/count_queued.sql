-- Ready (queued, execute_after < now(): pgqueuer's own claim condition) and scheduled (queued, later)
-- jobs per entrypoint, read only from pgqueuer's own index pgqueuer_ep_ea_idx (entrypoint,
-- execute_after) WHERE status = 'queued': a recursive skip-scan finds each entrypoint, then each
-- count is a range scan stopping at %(cap1)s rows and the oldest ready job is the range's first entry.
WITH RECURSIVE ep AS (
    (SELECT entrypoint FROM {jobs} WHERE status = 'queued' ORDER BY entrypoint LIMIT 1)
    UNION ALL
    SELECT (SELECT j.entrypoint FROM {jobs} j WHERE j.status = 'queued' AND j.entrypoint > ep.entrypoint
            ORDER BY j.entrypoint LIMIT 1)
    FROM ep WHERE ep.entrypoint IS NOT NULL
)
SELECT ep.entrypoint AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {jobs} j WHERE j.status = 'queued'
            AND j.entrypoint = ep.entrypoint AND j.execute_after < now() LIMIT %(cap1)s) r) AS ready,
       (SELECT count(*) FROM (SELECT 1 FROM {jobs} j WHERE j.status = 'queued'
            AND j.entrypoint = ep.entrypoint AND j.execute_after >= now() LIMIT %(cap1)s) s) AS scheduled,
       (SELECT extract(epoch FROM now() - j.execute_after)::float8 FROM {jobs} j
        WHERE j.status = 'queued' AND j.entrypoint = ep.entrypoint AND j.execute_after < now()
        ORDER BY j.execute_after LIMIT 1) AS oldest_ready_age_s
FROM ep WHERE ep.entrypoint IS NOT NULL
