-- Active jobs, soonest (or longest past) expiry first, at most %(rows)s, when no index serves active
-- jobs: one scan with a top-N sort (leases.sql reads them through the advised index instead).
SELECT j.id::text AS id, j.name AS queue, NULL::text AS holder, 'unknown' AS liveness,
       NULL::int AS holder_pid, j.retry_count + 1 AS attempts, j.retry_limit + 1 AS max_attempts,
       j.started_on AS started_at, j.started_on + j.expire_in AS expires_at,
       extract(epoch FROM j.started_on + j.expire_in - now())::float8 AS seconds_left,
       j.started_on + j.expire_in < now() AS stuck,
       CASE WHEN pg_column_size(j.data) <= 65536 THEN left(j.data::text, 200) END AS payload_preview
FROM {job} j
WHERE j.state = 'active' AND j.name NOT LIKE '\_\_pgboss\_\_%%'
ORDER BY j.started_on + j.expire_in, j.id
LIMIT %(rows)s
