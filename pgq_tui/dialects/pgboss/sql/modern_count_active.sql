-- pg-boss 11 and 12: running and stuck jobs per queue (from schema 46 from job_i14's active range;
-- before, a scan). Stuck is pg-boss's own supervisor rule: active past started_on + expire_seconds
-- (failJobsByTimeout), or, from schema 30 (12.12) for a job sent with heartbeatSeconds, heartbeat_on
-- older than heartbeat_seconds (failJobsByHeartbeat). Active jobs are few (the workers' concurrency,
-- plus any a crash left behind until the supervisor fails them), but their index range is mostly dead
-- entries until autovacuum comes (each job's move to completed leaves one), each a heap visit: ONE
-- walk of the range counts both, stopping at %(cap1)s rows; only a queue with that many active jobs
-- walks again, once per count, each count stopping at %(cap1)s rows as before.
SELECT q.name AS queue,
       CASE WHEN %(cap1)s::bigint IS NULL OR a.n < %(cap1)s::bigint THEN a.running ELSE
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name AND j.state = 'active'
            AND j.started_on + j.expire_seconds * interval '1 second' >= now()
            AND NOT coalesce(j.heartbeat_on + j.heartbeat_seconds * interval '1 second' < now(), false)  -- [30+]
            LIMIT %(cap1)s) r) END AS running,
       CASE WHEN %(cap1)s::bigint IS NULL OR a.n < %(cap1)s::bigint THEN a.stuck ELSE
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name AND j.state = 'active'
            AND (j.started_on + j.expire_seconds * interval '1 second' < now()
                 OR coalesce(j.heartbeat_on + j.heartbeat_seconds * interval '1 second' < now(), false)  -- [30+]
                 )
            LIMIT %(cap1)s) s) END AS stuck
FROM {queue} q
CROSS JOIN LATERAL (
    SELECT count(*) AS n, count(*) FILTER (WHERE NOT x.stuck) AS running,
           count(*) FILTER (WHERE x.stuck) AS stuck
    FROM (SELECT (j.started_on + j.expire_seconds * interval '1 second' < now()
                  OR coalesce(j.heartbeat_on + j.heartbeat_seconds * interval '1 second' < now(), false)  -- [30+]
                  ) AS stuck
          FROM {job} j WHERE j.name = q.name AND j.state = 'active' LIMIT %(cap1)s) x
) a
WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
