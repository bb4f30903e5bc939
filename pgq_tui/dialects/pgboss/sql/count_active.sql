-- Running and stuck jobs per queue. Stuck is pg-boss's own rule: active past started_on + expire_in,
-- after which its supervisor fails the job by timeout (retry while retries remain). Read through the
-- index pgq-top advises, (name, started_on) INCLUDE (expire_in, id)
-- WHERE state = 'active'; each count stops at %(cap1)s rows. Running is read newest first and stuck
-- oldest first: a stuck job is one that started long ago, so neither walk passes over the other's
-- rows before reaching its cap (the oldest-first walk for running would pass every stuck job first).
SELECT q.name AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name AND j.state = 'active'
            AND j.started_on + j.expire_in >= now() ORDER BY j.started_on DESC LIMIT %(cap1)s) r) AS running,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name AND j.state = 'active'
            AND j.started_on + j.expire_in < now() ORDER BY j.started_on LIMIT %(cap1)s) s) AS stuck
FROM {queue} q
WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
