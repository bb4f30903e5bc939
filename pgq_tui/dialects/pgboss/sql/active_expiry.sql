-- pg-boss 10.x: each queue's expire_in values among its active jobs (CTE e: name, expire_in), by a
-- recursive skip-scan over the advised index (name, expire_in, started_on) INCLUDE (id) WHERE state =
-- 'active': one descent per value, and a queue has a few (count_active.sql, leases.sql).
e AS (
    SELECT q.name, (SELECT j.expire_in FROM {job} j WHERE j.name = q.name AND j.state = 'active'
                    ORDER BY j.expire_in LIMIT 1) AS expire_in
    FROM {queue} q
    WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
    UNION ALL
    SELECT e.name, (SELECT j.expire_in FROM {job} j WHERE j.name = e.name AND j.state = 'active'
                    AND j.expire_in > e.expire_in ORDER BY j.expire_in LIMIT 1)
    FROM e WHERE e.expire_in IS NOT NULL
)
