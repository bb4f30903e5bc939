-- Dead jobs (failed: kept by entrypoints with on_failure="hold") per entrypoint, through the index
-- pgq-top advises, (entrypoint, id) WHERE status = 'failed'; each count stops at %(cap1)s rows.
{queues}
SELECT q.queue,
       (SELECT count(*) FROM (SELECT 1 FROM {jobs} j WHERE j.status = 'failed'
            AND j.entrypoint = q.queue LIMIT %(cap1)s) f) AS dead
FROM queues q WHERE q.queue IS NOT NULL
