-- Dead jobs (failed) per queue, through the index pgq-top advises,
-- (queue_name, id) WHERE status = 'failed'; each count stops at %(cap1)s rows per queue. The queue
-- list is a recursive skip-scan over the same index.
{queues}
SELECT q.queue::text AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {jobs} j WHERE j.status = 'failed' AND j.queue_name = q.queue
            LIMIT %(cap1)s) f) AS dead
FROM queues q WHERE q.queue IS NOT NULL
