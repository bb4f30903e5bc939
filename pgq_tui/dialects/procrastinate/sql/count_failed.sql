-- Dead jobs (failed) per queue, through the index pgq-top advises,
-- (queue_name, id) WHERE status = 'failed'; each count stops at %(cap1)s rows per queue. The queue
-- list is a recursive skip-scan over the same index.
WITH RECURSIVE q AS (
    (SELECT queue_name FROM {jobs} WHERE status = 'failed' ORDER BY queue_name LIMIT 1)
    UNION ALL
    SELECT (SELECT j.queue_name FROM {jobs} j WHERE j.status = 'failed' AND j.queue_name > q.queue_name
            ORDER BY j.queue_name LIMIT 1)
    FROM q WHERE q.queue_name IS NOT NULL
)
SELECT q.queue_name::text AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {jobs} j WHERE j.status = 'failed' AND j.queue_name = q.queue_name
            LIMIT %(cap1)s) f) AS dead
FROM q WHERE q.queue_name IS NOT NULL
