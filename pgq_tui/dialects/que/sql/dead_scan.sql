-- Expired jobs (Que's dead), newest first, at most %(rows)s: no index of Que's serves expired_at, so
-- a scan. attempts is error_count; the limit is the job class's maximum_retry_count (15 by default),
-- in the application's code, so max_attempts is NULL.
SELECT j.id, j.queue::text AS queue, j.error_count::int AS attempts, NULL::int AS max_attempts,
       j.expired_at AS finished_at, j.last_error_message AS error, {payload} AS payload_preview
FROM {jobs} j
WHERE j.expired_at IS NOT NULL
ORDER BY j.expired_at DESC, j.id DESC
LIMIT %(rows)s
