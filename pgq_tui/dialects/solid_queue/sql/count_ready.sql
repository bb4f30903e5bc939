-- Ready jobs per queue: rows of solid_queue_ready_executions, through Solid Queue's own
-- index_solid_queue_poll_by_queue (queue_name, priority, job_id): a recursive skip-scan finds the
-- queues, each count stops at %(cap1)s entries (O(queues x cap1)). oldest_ready_age_s: the longest
-- wait among the heads of each priority's line (Solid Queue claims by priority, then job_id), since
-- the ready execution was created; Solid Queue's times are UTC without time zone.
WITH RECURSIVE q AS (
    (SELECT r.queue_name FROM {ready} r ORDER BY r.queue_name LIMIT 1)
    UNION ALL
    SELECT (SELECT r.queue_name FROM {ready} r WHERE r.queue_name > q.queue_name
            ORDER BY r.queue_name LIMIT 1)
    FROM q WHERE q.queue_name IS NOT NULL
)
SELECT q.queue_name::text AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {ready} r WHERE r.queue_name = q.queue_name
            LIMIT %(cap1)s) x) AS ready,
       extract(epoch FROM (now() AT TIME ZONE 'UTC') - (
           WITH RECURSIVE pr AS (
               (SELECT r.priority FROM {ready} r WHERE r.queue_name = q.queue_name ORDER BY r.priority LIMIT 1)
               UNION ALL
               SELECT (SELECT r.priority FROM {ready} r WHERE r.queue_name = q.queue_name
                         AND r.priority > pr.priority ORDER BY r.priority LIMIT 1)
               FROM pr WHERE pr.priority IS NOT NULL
           )
           SELECT min((SELECT r.created_at FROM {ready} r WHERE r.queue_name = q.queue_name
                         AND r.priority = pr.priority ORDER BY r.job_id LIMIT 1))
           FROM pr WHERE pr.priority IS NOT NULL))::float8 AS oldest_ready_age_s
FROM q WHERE q.queue_name IS NOT NULL
