-- pg-boss 12: active jobs, the soonest to be stuck first, at most %(rows)s per queue and in total.
-- pg-boss records no worker for a job, so the holder is NULL; where the job was sent with
-- heartbeatSeconds its worker refreshes heartbeat_on, so the holder is alive while that is fresher
-- than heartbeat_seconds and gone after (pg-boss's failJobsByHeartbeat rule), else unknown.
-- expires_at is the earlier of the timeout (started_on + expire_seconds) and the heartbeat deadline.
-- Two phases: the chosen jobs' keys from job_i14's active range, then only those rows, by pg-boss's
-- primary key (name, id), one LATERAL probe per chosen row (see the 10.x leases.sql for why).
WITH chosen AS (
    SELECT a.name, a.id, a.expires_at
    FROM {queue} q
    CROSS JOIN LATERAL (
        SELECT j.name, j.id,
               least(j.started_on + j.expire_seconds * interval '1 second',
                     j.heartbeat_on + j.heartbeat_seconds * interval '1 second') AS expires_at
        FROM {job} j
        WHERE j.name = q.name AND j.state = 'active'
        ORDER BY 3 LIMIT %(rows)s
    ) a
    WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
    ORDER BY a.expires_at, a.id
    LIMIT %(rows)s
)
SELECT j.id::text AS id, j.name AS queue, NULL::text AS holder,
       CASE WHEN j.heartbeat_seconds IS NULL OR j.heartbeat_on IS NULL THEN 'unknown'
            WHEN j.heartbeat_on + j.heartbeat_seconds * interval '1 second' >= now() THEN 'alive'
            ELSE 'gone' END AS liveness,
       NULL::int AS holder_pid, j.retry_count + 1 AS attempts, j.retry_limit + 1 AS max_attempts,
       j.started_on AS started_at, c.expires_at,
       extract(epoch FROM c.expires_at - now())::float8 AS seconds_left, c.expires_at < now() AS stuck,
       CASE WHEN pg_column_size(j.data) <= 65536 THEN left(j.data::text, 200) END AS payload_preview,
       CASE WHEN j.heartbeat_seconds IS NOT NULL
            THEN extract(epoch FROM now() - j.heartbeat_on)::float8 END AS heartbeat_age
FROM chosen c
CROSS JOIN LATERAL (SELECT * FROM {job} j WHERE j.name = c.name AND j.id = c.id AND j.state = 'active'
                    LIMIT 1) j
ORDER BY c.expires_at, c.id
