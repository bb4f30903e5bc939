-- Pending jobs per (queue, priority), read only from the claim index
-- (queue, priority DESC, run_at, id) WHERE status = 'pending'.
-- A recursive skip-scan finds each distinct (queue, priority) with one index descent; within a pair
-- run_at is the next index column, so ready (run_at <= now()), scheduled (run_at > now()) and the
-- oldest run_at are range scans, each counted only up to %(cap1)s rows.
WITH RECURSIVE pairs AS (
    (SELECT queue, priority FROM {jobs} WHERE status = 'pending' ORDER BY queue, priority DESC LIMIT 1)
    UNION ALL
    SELECT n.queue, n.priority
    FROM pairs p
    CROSS JOIN LATERAL (
        (SELECT j.queue, j.priority FROM {jobs} j
         WHERE j.status = 'pending' AND j.queue = p.queue AND j.priority < p.priority
         ORDER BY j.queue, j.priority DESC LIMIT 1)
        UNION ALL
        (SELECT j.queue, j.priority FROM {jobs} j
         WHERE j.status = 'pending' AND j.queue > p.queue
         ORDER BY j.queue, j.priority DESC LIMIT 1)
        LIMIT 1
    ) n
)
SELECT p.queue, p.priority,
       (SELECT count(*) FROM (SELECT 1 FROM {jobs} j
            WHERE j.status = 'pending' AND j.queue = p.queue AND j.priority = p.priority
              AND j.run_at <= now() LIMIT %(cap1)s) r) AS ready,
       (SELECT count(*) FROM (SELECT 1 FROM {jobs} j
            WHERE j.status = 'pending' AND j.queue = p.queue AND j.priority = p.priority
              AND j.run_at > now() LIMIT %(cap1)s) s) AS scheduled,
       (SELECT extract(epoch FROM now() - j.run_at)::float8 FROM {jobs} j
            WHERE j.status = 'pending' AND j.queue = p.queue AND j.priority = p.priority
              AND j.run_at <= now()
            ORDER BY j.run_at LIMIT 1) AS oldest_ready_age_s
FROM pairs p
