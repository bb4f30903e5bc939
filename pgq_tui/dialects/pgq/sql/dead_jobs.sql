-- The most recently finished dead letters, to offer for retry/discard. Queues come from a skip-scan
-- over the dead index (queue, finished_at DESC NULLS LAST, id DESC) WHERE status = 'failed'; each queue's most
-- recent %(rows)s are read from that index in the same order, so the work is queues x %(rows)s index
-- entries however many dead jobs pile up. Dead jobs without a finished_at (written by another
-- writer) sort last. The true total comes from the queue counts.
-- payload_preview: the start of the payload for the dashboard's filter; skipped for payloads stored
-- larger than 64 kB, which would be detoasted on every poll.
-- dead_queues: the shared skip-scan CTE in dead_queues.sql (statements.monitor_sql puts it in).
WITH RECURSIVE {dead_queues}
SELECT l.id, l.queue, l.attempts, l.max_attempts, l.finished_at, l.last_error, l.payload_preview
FROM dead
CROSS JOIN LATERAL (SELECT j.id, j.queue, j.attempts, j.max_attempts, j.finished_at, left(j.last_error, 500) AS last_error,
                           CASE WHEN pg_column_size(j.payload) <= 65536
                                THEN left(j.payload::text, 200) END AS payload_preview
                    FROM {jobs} j WHERE j.status = 'failed' AND j.queue = dead.queue
                    ORDER BY j.finished_at DESC NULLS LAST, j.id DESC LIMIT %(rows)s) l
WHERE dead.queue IS NOT NULL
ORDER BY l.finished_at DESC NULLS LAST, l.id DESC
LIMIT %(rows)s
