-- Running and stuck jobs per queue when no index serves active jobs: one scan of the active rows of
-- every partition of `job`, exact (cap1 is not used); in the poll while the table is small, else in
-- the background counter (monitor/tiers.py). Stuck is pg-boss's own rule: active past started_on +
-- expire_in (10.x) or + expire_seconds (11+), or from schema 30 for a job sent with heartbeatSeconds,
-- heartbeat_on older than heartbeat_seconds. The advised index makes the figure live.
SELECT j.name AS queue,
       count(*) FILTER (WHERE j.started_on >= now() - j.expire_in) AS running,  -- [<25]
       count(*) FILTER (WHERE j.started_on < now() - j.expire_in) AS stuck  -- [<25]
       count(*) FILTER (WHERE j.started_on + j.expire_seconds * interval '1 second' >= now()  -- [25+]
           AND NOT coalesce(j.heartbeat_on + j.heartbeat_seconds * interval '1 second' < now(), false)  -- [30+]
           ) AS running,  -- [25+]
       count(*) FILTER (WHERE j.started_on + j.expire_seconds * interval '1 second' < now()  -- [25+]
           OR coalesce(j.heartbeat_on + j.heartbeat_seconds * interval '1 second' < now(), false)  -- [30+]
           ) AS stuck  -- [25+]
FROM {job} j
WHERE j.state = 'active' AND j.name NOT LIKE '\_\_pgboss\_\_%%'
GROUP BY j.name
