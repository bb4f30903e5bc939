-- pg-boss 11 and 12: active jobs, the soonest to be stuck first, at most %(rows)s per queue and in
-- total. pg-boss records no worker for a job, so the holder is NULL and its liveness unknown; from
-- schema 30 (12.12), where the job was sent with heartbeatSeconds, its worker refreshes heartbeat_on,
-- so the holder is alive while that is fresher than heartbeat_seconds and gone after (pg-boss's
-- failJobsByHeartbeat rule). expires_at is the timeout (started_on + expire_seconds), or the
-- heartbeat deadline if earlier. Two phases: the chosen jobs' keys (from job_i14's active range at
-- schema 46, else a scan), then only those rows, by pg-boss's primary key (name, id), one LATERAL
-- probe per chosen row (see the 10.x leases.sql for why).
WITH chosen AS (
    SELECT a.name, a.id, a.expires_at
    FROM {queue} q
    CROSS JOIN LATERAL (
        SELECT j.name, j.id,
               least(j.started_on + j.expire_seconds * interval '1 second'
                     , j.heartbeat_on + j.heartbeat_seconds * interval '1 second'  -- [30+]
                     ) AS expires_at
        FROM {job} j
        WHERE j.name = q.name AND j.state = 'active'
        ORDER BY 3 LIMIT %(rows)s
    ) a
    WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
    ORDER BY a.expires_at, a.id
    LIMIT %(rows)s
)
SELECT {lease_row}
FROM chosen c
CROSS JOIN LATERAL (SELECT * FROM {job} j WHERE j.name = c.name AND j.id = c.id AND j.state = 'active'
                    LIMIT 1) j
ORDER BY c.expires_at, c.id
