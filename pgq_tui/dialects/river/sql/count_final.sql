-- Finalized jobs per queue: discarded (dead: out of attempts), completed (done) and cancelled, kept
-- until River's JobCleaner deletes them (24 h, 24 h and 7 days after finalized_at by default).
-- Through river_job_prioritized_fetching_index: a recursive skip-scan finds each state's queues,
-- then each count is an index range that stops at %(cap1)s entries: O(queues x cap1), flat at 5M rows.
{counted}
SELECT queue,
       coalesce(sum(n) FILTER (WHERE state = 'discarded'), 0) AS dead,
       coalesce(sum(n) FILTER (WHERE state = 'completed'), 0) AS done,
       coalesce(sum(n) FILTER (WHERE state = 'cancelled'), 0) AS cancelled
FROM counted
GROUP BY queue
