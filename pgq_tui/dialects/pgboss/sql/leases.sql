-- Active jobs, the longest expired first, at most %(rows)s per queue and in total, through the advised
-- index (name, started_on) INCLUDE (expire_in)
-- WHERE state = 'active'. pg-boss records no worker for a job, so the holder
-- is unknown; expires_at is started_on + expire_in, its timeout.
SELECT a.id::text AS id, a.queue, NULL::text AS holder, 'unknown' AS liveness, NULL::int AS holder_pid,
       a.attempts, a.max_attempts, a.started_at, a.expires_at,
       extract(epoch FROM a.expires_at - now())::float8 AS seconds_left, a.expires_at < now() AS stuck,
       a.payload_preview
FROM {queue} q
CROSS JOIN LATERAL (
    SELECT j.id, j.name AS queue, j.retry_count + 1 AS attempts, j.retry_limit + 1 AS max_attempts,
           j.started_on AS started_at, j.started_on + j.expire_in AS expires_at,
           CASE WHEN pg_column_size(j.data) <= 65536 THEN left(j.data::text, 200) END AS payload_preview
    FROM {job} j
    WHERE j.name = q.name AND j.state = 'active'
    ORDER BY j.started_on LIMIT %(rows)s
) a
WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
ORDER BY a.expires_at, a.id
LIMIT %(rows)s
