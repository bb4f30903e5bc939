-- Active jobs, soonest (or longest past) expiry first, at most %(rows)s, when no index serves active
-- jobs: one scan with a top-N sort (leases.sql and modern_leases.sql read them through an index).
-- expires_at is the timeout: started_on + expire_in before schema 25, started_on + expire_seconds
-- after, or from 30 (heartbeats) the heartbeat deadline if earlier; the holder is alive while a
-- heartbeat is fresh, gone after, else unknown (pg-boss records no worker).
SELECT j.id::text AS id, j.name AS queue, NULL::text AS holder,
       'unknown' AS liveness,  -- [<30]
       CASE WHEN j.heartbeat_seconds IS NULL OR j.heartbeat_on IS NULL THEN 'unknown'  -- [30+]
            WHEN j.heartbeat_on + j.heartbeat_seconds * interval '1 second' >= now() THEN 'alive'  -- [30+]
            ELSE 'gone' END AS liveness,  -- [30+]
       NULL::int AS holder_pid, j.retry_count + 1 AS attempts, j.retry_limit + 1 AS max_attempts,
       j.started_on AS started_at, e.expires_at,
       extract(epoch FROM e.expires_at - now())::float8 AS seconds_left, e.expires_at < now() AS stuck,
       CASE WHEN pg_column_size(j.data) <= 65536 THEN left(j.data::text, 200) END AS payload_preview
       , NULL::float8 AS heartbeat_age  -- [25-29]
       , CASE WHEN j.heartbeat_seconds IS NOT NULL  -- [30+]
              THEN extract(epoch FROM now() - j.heartbeat_on)::float8 END AS heartbeat_age  -- [30+]
FROM {job} j
CROSS JOIN LATERAL (SELECT j.started_on + j.expire_in AS expires_at) e  -- [<25]
CROSS JOIN LATERAL (SELECT least(j.started_on + j.expire_seconds * interval '1 second'  -- [25+]
                                 , j.heartbeat_on + j.heartbeat_seconds * interval '1 second'  -- [30+]
                                 ) AS expires_at) e  -- [25+]
WHERE j.state = 'active' AND j.name NOT LIKE '\_\_pgboss\_\_%%'
ORDER BY e.expires_at, j.id
LIMIT %(rows)s
