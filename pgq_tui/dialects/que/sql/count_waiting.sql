-- Ready and scheduled jobs per queue, through Que's own que_poll_idx (job_schema_version, queue, priority,
-- run_at, id) WHERE finished_at IS NULL AND expired_at IS NULL: a recursive skip-scan finds the
-- (job_schema_version, queue) pairs, then each count is an index range that stops at %(cap1)s rows.
-- Que's own words (que_determine_job_state, migration 4): errored = error_count > 0 (waiting for its
-- retry_in backoff, or due; counted by count_final_scan.sql: error_count is in no index), scheduled =
-- run_at > now(), ready = otherwise; a job a Que lock holds (held.sql) is none of them (running or
-- stuck). oldest_ready_age_s: the queue's first ready job in
-- Que's own poll order (priority, run_at, id), the minimum run_at over the queue's priorities, each
-- one index probe (a second skip-scan, over priority).
WITH RECURSIVE held AS MATERIALIZED (
    SELECT {held} AS ids
), pairs AS (
    (SELECT j.job_schema_version AS v, j.queue FROM {jobs} j
     WHERE j.finished_at IS NULL AND j.expired_at IS NULL
     ORDER BY j.job_schema_version, j.queue LIMIT 1)
    UNION ALL
    SELECT n.v, n.queue FROM pairs p CROSS JOIN LATERAL (
        SELECT j.job_schema_version AS v, j.queue FROM {jobs} j
        WHERE j.finished_at IS NULL AND j.expired_at IS NULL
          AND (j.job_schema_version, j.queue) > (p.v, p.queue)
        ORDER BY j.job_schema_version, j.queue LIMIT 1) n
), priorities AS (
    SELECT p.v, p.queue, (SELECT j.priority FROM {jobs} j
                          WHERE j.job_schema_version = p.v AND j.queue = p.queue
                            AND j.finished_at IS NULL AND j.expired_at IS NULL
                          ORDER BY j.priority LIMIT 1) AS priority
    FROM pairs p
    UNION ALL
    SELECT r.v, r.queue, (SELECT j.priority FROM {jobs} j
                          WHERE j.job_schema_version = r.v AND j.queue = r.queue AND j.priority > r.priority
                            AND j.finished_at IS NULL AND j.expired_at IS NULL
                          ORDER BY j.priority LIMIT 1)
    FROM priorities r WHERE r.priority IS NOT NULL
), oldest AS (
    SELECT r.queue, min((SELECT j.run_at FROM {jobs} j, held h
                         WHERE j.job_schema_version = r.v AND j.queue = r.queue AND j.priority = r.priority
                           AND j.finished_at IS NULL AND j.expired_at IS NULL AND j.run_at <= now()
                           AND j.error_count = 0 AND j.id <> ALL (h.ids)
                         ORDER BY j.run_at, j.id LIMIT 1)) AS run_at
    FROM priorities r WHERE r.priority IS NOT NULL GROUP BY r.queue
), counted AS (
    SELECT p.queue,
           (SELECT count(*) FROM (SELECT 1 FROM {jobs} j, held h
                WHERE j.job_schema_version = p.v AND j.queue = p.queue
                  AND j.finished_at IS NULL AND j.expired_at IS NULL AND j.run_at <= now()
                  AND j.error_count = 0 AND j.id <> ALL (h.ids) LIMIT %(cap1)s) x) AS ready,
           (SELECT count(*) FROM (SELECT 1 FROM {jobs} j, held h
                WHERE j.job_schema_version = p.v AND j.queue = p.queue
                  AND j.finished_at IS NULL AND j.expired_at IS NULL AND j.run_at > now()
                  AND j.error_count = 0 AND j.id <> ALL (h.ids) LIMIT %(cap1)s) x) AS scheduled
    FROM pairs p
)
SELECT c.queue::text AS queue, sum(c.ready)::bigint AS ready, sum(c.scheduled)::bigint AS scheduled,
       (extract(epoch FROM now() - min(o.run_at)))::float8 AS oldest_ready_age_s
FROM counted c LEFT JOIN oldest o ON o.queue = c.queue
GROUP BY c.queue
