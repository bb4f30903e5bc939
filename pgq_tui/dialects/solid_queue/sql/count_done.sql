-- Finished jobs per queue (kept while preserve_finished_jobs is on; cleared after 1 day by
-- default), through Solid Queue's own index_solid_queue_jobs_for_filtering (queue_name,
-- finished_at): a recursive skip-scan finds the queues, each count stops at %(cap1)s entries.
WITH RECURSIVE q AS (
    (SELECT j.queue_name FROM {jobs} j ORDER BY j.queue_name LIMIT 1)
    UNION ALL
    SELECT (SELECT j.queue_name FROM {jobs} j WHERE j.queue_name > q.queue_name ORDER BY j.queue_name LIMIT 1)
    FROM q WHERE q.queue_name IS NOT NULL
)
SELECT q.queue_name::text AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {jobs} j WHERE j.queue_name = q.queue_name
            AND j.finished_at IS NOT NULL LIMIT %(cap1)s) x) AS done
FROM q WHERE q.queue_name IS NOT NULL
