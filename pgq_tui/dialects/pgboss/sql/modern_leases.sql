-- pg-boss 11 and 12: active jobs, the longest stuck first, then the soonest to be stuck, at most
-- %(rows)s stuck and %(rows)s others (each list capped on its own). pg-boss records no worker for a job, so the holder is NULL and its liveness unknown; from
-- schema 30 (12.12), where the job was sent with heartbeatSeconds, its worker refreshes heartbeat_on,
-- so the holder is alive while that is fresher than heartbeat_seconds and gone after (pg-boss's
-- failJobsByHeartbeat rule). expires_at is the timeout (started_on + expire_seconds), or the
-- heartbeat deadline if earlier. Two phases: every active job's key and expiry (job_i14's active range
-- at schema 46, else a scan: O(active jobs), the expiry is computed), then only the chosen rows, by pg-boss's primary key (name, id), one LATERAL
-- probe per chosen row (see the 10.x leases.sql for why).
WITH active AS MATERIALIZED (
    SELECT q.name, a.id, a.expires_at
    FROM {queue} q
    CROSS JOIN LATERAL (
        SELECT j.id,
               least(j.started_on + j.expire_seconds * interval '1 second'
                     , j.heartbeat_on + j.heartbeat_seconds * interval '1 second'  -- [30+]
                     ) AS expires_at
        FROM {job} j
        WHERE j.name = q.name AND j.state = 'active'
        OFFSET 0  -- walked queue by queue (not pulled up into one bitmap scan of every queue's range)
    ) a
    WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
), chosen AS (  -- each list capped on its own: the stuck ones never crowd out the running ones
    (SELECT * FROM active WHERE expires_at < now() ORDER BY expires_at, id LIMIT %(rows)s)
    UNION ALL
    (SELECT * FROM active WHERE expires_at >= now() ORDER BY expires_at, id LIMIT %(rows)s)
)
SELECT {lease_row}
FROM chosen c
CROSS JOIN LATERAL (SELECT * FROM {job} j WHERE j.name = c.name AND j.id = c.id AND j.state = 'active'
                    LIMIT 1) j
ORDER BY c.expires_at, c.id
