-- pg-boss 11 and 12: every active job's key and its expiry, queue by queue (CTE active: name, id,
-- expires_at: the timeout, started_on + expire_seconds, or from schema 30 the heartbeat deadline if
-- earlier), and the lease list's jobs among them (CTE chosen, the same columns): at most %(rows)s
-- stuck and %(rows)s others, each list capped on its own (the stuck ones never crowd out the running
-- ones), the soonest expiry first. modern_leases.sql and modern_active_pass.sql.
active AS MATERIALIZED (
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
), chosen AS (
    (SELECT * FROM active WHERE expires_at < now() ORDER BY expires_at, id LIMIT %(rows)s)
    UNION ALL
    (SELECT * FROM active WHERE expires_at >= now() ORDER BY expires_at, id LIMIT %(rows)s)
)
