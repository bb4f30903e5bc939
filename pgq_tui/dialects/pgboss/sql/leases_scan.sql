-- Active jobs, soonest (or longest past) expiry first, at most %(rows)s stuck and %(rows)s others (each
-- list capped on its own: pgq_n, the row's place in its list), when no index serves active jobs: one
-- scan (leases.sql and modern_leases.sql read them through an index).
-- expires_at is the timeout: started_on + expire_in before schema 25, started_on + expire_seconds
-- after, or from 30 (heartbeats) the heartbeat deadline if earlier (the row's columns: lease_row.sql).
SELECT {lease_row}
FROM (
    SELECT j.*, c.expires_at AS pgq_expires_at,
           row_number() OVER (PARTITION BY c.expires_at < now() ORDER BY c.expires_at, j.id) AS pgq_n
    FROM {job} j
    CROSS JOIN LATERAL (SELECT j.started_on + j.expire_in AS expires_at) c  -- [<25]
    CROSS JOIN LATERAL (SELECT least(j.started_on + j.expire_seconds * interval '1 second'  -- [25+]
                                     , j.heartbeat_on + j.heartbeat_seconds * interval '1 second'  -- [30+]
                                     ) AS expires_at) c  -- [25+]
    WHERE j.state = 'active' AND j.name NOT LIKE '\_\_pgboss\_\_%%'
) j
CROSS JOIN LATERAL (SELECT j.pgq_expires_at AS expires_at) c
WHERE j.pgq_n <= %(rows)s
ORDER BY c.expires_at, j.id
