-- pg-boss, every schema: a lease row's columns, of an active job's row `j` and its chosen key `c` (its
-- expires_at: the timeout, or from schema 30 the heartbeat deadline if earlier); the holder is alive
-- while a heartbeat is fresh, gone after, else unknown (pg-boss records no worker). heartbeat_age from
-- schema 25 (the 11 and 12 lease columns). leases.sql, leases_scan.sql, modern_leases.sql and
-- modern_active_pass.sql.
j.id::text AS id, j.name AS queue, NULL::text AS holder,
       'unknown' AS liveness,  -- [<30]
       CASE WHEN j.heartbeat_seconds IS NULL OR j.heartbeat_on IS NULL THEN 'unknown'  -- [30+]
            WHEN j.heartbeat_on + j.heartbeat_seconds * interval '1 second' >= now() THEN 'alive'  -- [30+]
            ELSE 'gone' END AS liveness,  -- [30+]
       NULL::int AS holder_pid, j.retry_count + 1 AS attempts, j.retry_limit + 1 AS max_attempts,
       j.started_on AS started_at, c.expires_at,
       extract(epoch FROM c.expires_at - now())::float8 AS seconds_left, c.expires_at < now() AS stuck,
       CASE WHEN pg_column_size(j.data) <= 65536 THEN left(j.data::text, 200) END AS payload_preview
       , NULL::float8 AS heartbeat_age  -- [25-29]
       , CASE WHEN j.heartbeat_seconds IS NOT NULL  -- [30+]
              THEN extract(epoch FROM now() - j.heartbeat_on)::float8 END AS heartbeat_age  -- [30+]
