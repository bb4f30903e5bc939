-- Ready (queued, execute_after < now(): pgqueuer's own claim condition) and scheduled (queued, later)
-- jobs per entrypoint, read only from pgqueuer's own index pgqueuer_ep_ea_idx (entrypoint,
-- execute_after) WHERE status = 'queued': a recursive skip-scan finds each entrypoint, then each
-- count is a range scan stopping at %(cap1)s rows and the oldest ready job is the range's first entry.
{queues}
SELECT q.queue,
       (SELECT count(*) FROM (SELECT 1 FROM {jobs} j WHERE j.status = 'queued'
            AND j.entrypoint = q.queue AND j.execute_after < now() LIMIT %(cap1)s) r) AS ready,
       (SELECT count(*) FROM (SELECT 1 FROM {jobs} j WHERE j.status = 'queued'
            AND j.entrypoint = q.queue AND j.execute_after >= now() LIMIT %(cap1)s) s) AS scheduled,
       (SELECT extract(epoch FROM now() - j.execute_after)::float8 FROM {jobs} j
        WHERE j.status = 'queued' AND j.entrypoint = q.queue AND j.execute_after < now()
        ORDER BY j.execute_after LIMIT 1) AS oldest_ready_age_s
FROM queues q WHERE q.queue IS NOT NULL
