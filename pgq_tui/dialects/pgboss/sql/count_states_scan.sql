-- Running, stuck, failed and completed jobs per queue in ONE scan of every partition of `job`, when
-- no index serves any of them (the stock schema): count_active_scan.sql's running and stuck (pg-boss's
-- own stuck rule, on active rows), count_failed_scan.sql's dead and count_completed_scan.sql's done,
-- read in one pass instead of three (each would read the whole table again). Exact (cap1 is not
-- used); in the poll while the table is small, else in the background counter (monitor/tiers.py).
SELECT j.name AS queue,
       count(*) FILTER (WHERE j.state = 'active' AND j.started_on >= now() - j.expire_in) AS running,  -- [<25]
       count(*) FILTER (WHERE j.state = 'active' AND j.started_on < now() - j.expire_in) AS stuck,  -- [<25]
       count(*) FILTER (WHERE j.state = 'active'  -- [25+]
           AND j.started_on + j.expire_seconds * interval '1 second' >= now()  -- [25+]
           AND NOT coalesce(j.heartbeat_on + j.heartbeat_seconds * interval '1 second' < now(), false)  -- [30+]
           ) AS running,  -- [25+]
       count(*) FILTER (WHERE j.state = 'active' AND (  -- [25+]
           j.started_on + j.expire_seconds * interval '1 second' < now()  -- [25+]
           OR coalesce(j.heartbeat_on + j.heartbeat_seconds * interval '1 second' < now(), false)  -- [30+]
           )) AS stuck,  -- [25+]
       count(*) FILTER (WHERE j.state = 'failed') AS dead,
       count(*) FILTER (WHERE j.state = 'completed') AS done
FROM {job} j
WHERE j.state IN ('active', 'failed', 'completed') AND j.name NOT LIKE '\_\_pgboss\_\_%%'
GROUP BY j.name
