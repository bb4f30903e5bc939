-- Pending jobs per queue, read only from the claim index
-- (queue, priority DESC, run_at, id) WHERE status = 'pending'.
-- A recursive skip-scan finds each distinct (queue, priority) with one index descent; within a pair
-- run_at is the next index column, so ready (run_at <= now()), scheduled (run_at > now()) and the
-- oldest ready run_at are range scans. Each count stops at %(cap1)s rows per queue, over all its
-- priorities together.
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
), queues AS (
    SELECT queue, array_agg(priority) AS priorities FROM pairs GROUP BY queue
)
SELECT q.queue,
       (SELECT count(*) FROM (
            SELECT 1 FROM unnest(q.priorities) AS p(priority)
            CROSS JOIN LATERAL (SELECT 1 FROM {jobs} j
                WHERE j.status = 'pending' AND j.queue = q.queue AND j.priority = p.priority
                  AND j.run_at <= now() LIMIT %(cap1)s) x
            LIMIT %(cap1)s) r) AS ready,
       (SELECT count(*) FROM (
            SELECT 1 FROM unnest(q.priorities) AS p(priority)
            CROSS JOIN LATERAL (SELECT 1 FROM {jobs} j
                WHERE j.status = 'pending' AND j.queue = q.queue AND j.priority = p.priority
                  AND j.run_at > now() LIMIT %(cap1)s) x
            LIMIT %(cap1)s) s) AS scheduled,
       (SELECT max(extract(epoch FROM now() - o.run_at))::float8
        FROM unnest(q.priorities) AS p(priority)
        CROSS JOIN LATERAL (SELECT j.run_at FROM {jobs} j
            WHERE j.status = 'pending' AND j.queue = q.queue AND j.priority = p.priority
              AND j.run_at <= now()
            ORDER BY j.run_at LIMIT 1) o) AS oldest_ready_age_s
FROM queues q
