-- Finalized jobs per queue: discarded (dead: out of attempts), completed (done) and cancelled, kept
-- until River's JobCleaner deletes them (24 h, 24 h and 7 days after finalized_at by default).
-- Through river_job_prioritized_fetching_index: a recursive skip-scan finds each state's queues,
-- then each count is an index range that stops at %(cap1)s entries: O(queues x cap1), flat at 5M rows.
WITH RECURSIVE sq AS (
    SELECT s.state, (SELECT j.queue FROM {jobs} j WHERE j.state = s.state ORDER BY j.queue LIMIT 1) AS queue
    FROM unnest(ARRAY['discarded', 'completed', 'cancelled']::{state_type}[]) AS s(state)
    UNION ALL
    SELECT sq.state, (SELECT j.queue FROM {jobs} j WHERE j.state = sq.state AND j.queue > sq.queue
                      ORDER BY j.queue LIMIT 1)
    FROM sq WHERE sq.queue IS NOT NULL
), counted AS (
    SELECT sq.queue, sq.state::text AS state,
           (SELECT count(*) FROM (SELECT 1 FROM {jobs} j WHERE j.state = sq.state AND j.queue = sq.queue
                LIMIT %(cap1)s) x) AS n
    FROM sq WHERE sq.queue IS NOT NULL
)
SELECT queue,
       coalesce(sum(n) FILTER (WHERE state = 'discarded'), 0) AS dead,
       coalesce(sum(n) FILTER (WHERE state = 'completed'), 0) AS done,
       coalesce(sum(n) FILTER (WHERE state = 'cancelled'), 0) AS cancelled
FROM counted
GROUP BY queue
