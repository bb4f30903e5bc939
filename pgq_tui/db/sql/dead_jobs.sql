-- Dead letters to offer for retry/discard: per queue (skip-scan over the failed index
-- (queue) WHERE status = 'failed') at most %(rows)s rows, then the %(rows)s most recently finished.
-- Bounded by queues x rows however many failed jobs there are, so "most recent" is best effort
-- above that; the true total comes from the queue counts.
-- payload_preview: the start of the payload for the dashboard's filter; skipped for payloads stored
-- larger than 64 kB, which would be detoasted on every poll.
WITH RECURSIVE dead AS (
    (SELECT queue FROM {jobs} WHERE status = 'failed' ORDER BY queue LIMIT 1)
    UNION ALL
    SELECT (SELECT j.queue FROM {jobs} j WHERE j.status = 'failed' AND j.queue > dead.queue
            ORDER BY j.queue LIMIT 1)
    FROM dead WHERE dead.queue IS NOT NULL
)
SELECT l.id, l.queue, l.attempts, l.max_attempts, l.finished_at, l.last_error, l.payload_preview
FROM dead
CROSS JOIN LATERAL (SELECT j.id, j.queue, j.attempts, j.max_attempts, j.finished_at, left(j.last_error, 500) AS last_error,
                           CASE WHEN pg_column_size(j.payload) <= 65536
                                THEN left(j.payload::text, 200) END AS payload_preview
                    FROM {jobs} j WHERE j.status = 'failed' AND j.queue = dead.queue
                    ORDER BY j.queue DESC LIMIT %(rows)s) l
WHERE dead.queue IS NOT NULL
ORDER BY l.finished_at DESC NULLS LAST, l.id DESC
LIMIT %(rows)s
