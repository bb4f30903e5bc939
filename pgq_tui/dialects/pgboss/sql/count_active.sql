-- Running and stuck jobs per queue. Stuck is pg-boss's own rule: active past started_on + expire_in,
-- after which its supervisor fails the job by timeout (retry while retries remain). Read through the
-- index pgq-top advises, (name, started_on) INCLUDE (expire_in)
-- WHERE state = 'active'; each count stops at %(cap1)s rows.
SELECT q.name AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name AND j.state = 'active'
            AND j.started_on + j.expire_in >= now() LIMIT %(cap1)s) r) AS running,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name AND j.state = 'active'
            AND j.started_on + j.expire_in < now() LIMIT %(cap1)s) s) AS stuck
FROM {queue} q
WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
