-- pg-boss 11 and 12: running and stuck jobs per queue (from schema 46 from job_i14's active range;
-- before, a scan). Stuck is pg-boss's own supervisor rule: active past started_on + expire_seconds
-- (failJobsByTimeout), or, from schema 30 (12.12) for a job sent with heartbeatSeconds, heartbeat_on
-- older than heartbeat_seconds (failJobsByHeartbeat). Each count stops at %(cap1)s rows; active jobs
-- are few (the workers' concurrency, plus any a crash left behind until the supervisor fails them).
SELECT q.name AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name AND j.state = 'active'
            AND j.started_on + j.expire_seconds * interval '1 second' >= now()
            AND NOT coalesce(j.heartbeat_on + j.heartbeat_seconds * interval '1 second' < now(), false)  -- [30+]
            LIMIT %(cap1)s) r) AS running,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name AND j.state = 'active'
            AND (j.started_on + j.expire_seconds * interval '1 second' < now()
                 OR coalesce(j.heartbeat_on + j.heartbeat_seconds * interval '1 second' < now(), false)  -- [30+]
                 )
            LIMIT %(cap1)s) s) AS stuck
FROM {queue} q
WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
