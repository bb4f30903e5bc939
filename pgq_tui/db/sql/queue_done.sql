-- Kept finished jobs: at most %(cap1)s rows read in the order of the done index
-- (finished_at) WHERE status = 'done', counted by queue. Under the cap the counts are exact; above it
-- the caller takes the done index's size estimate (index_estimates.sql) and shares it out in the
-- proportions of a page sample (queue_sample.sql), since the oldest rows need not be typical.
SELECT d.queue, count(*) AS n
FROM (SELECT j.queue FROM {jobs} j WHERE j.status = 'done' ORDER BY j.finished_at LIMIT %(cap1)s) d
GROUP BY d.queue
