-- Kept finished jobs: a sample of at most %(cap1)s rows taken in the order of the done index
-- (finished_at) WHERE status = 'done', split by queue. Under the cap the counts are exact; above it
-- the caller scales the split to the index's size estimate (see index_estimates.sql).
SELECT d.queue, count(*) AS n
FROM (SELECT j.queue FROM {jobs} j WHERE j.status = 'done' ORDER BY j.finished_at LIMIT %(cap1)s) d
GROUP BY d.queue
