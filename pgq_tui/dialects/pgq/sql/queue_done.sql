-- Kept finished jobs: at most %(cap1)s rows read in the order of the done index
-- (finished_at) WHERE status = 'done', counted by queue. When fewer than %(cap1)s rows come back the
-- counts are exact; otherwise each queue's count is only a lower bound here, and the background count
-- (monitor/background.py, this statement with no cap) supplies exact figures.
SELECT d.queue, count(*) AS n
FROM (SELECT j.queue FROM {jobs} j WHERE j.status = 'done' ORDER BY j.finished_at LIMIT %(cap1)s) d
GROUP BY d.queue
