-- Running and stuck jobs per queue. Stuck is pg-boss's own rule: active past started_on + expire_in,
-- after which its supervisor fails the job by timeout (retry while retries remain). Read through the
-- index pgq-top advises, (name, expire_in, started_on) INCLUDE (id) WHERE state = 'active': pg-boss
-- writes expire_in as seconds (numeric * interval '1s', no day or month part), so for each expire_in
-- a queue uses, stuck is exactly the range started_on < now() - expire_in and running the rest. The
-- expire_in values come from a recursive skip-scan over the same index (active_expiry.sql), and each
-- state's walk stops at %(cap1)s rows in all: a few running jobs among many
-- stuck ones (or the reverse) cost no more than the cap, where a filter on (name, started_on) would
-- walk every active job of the queue.
WITH RECURSIVE {active_expiry}
SELECT q.name AS queue,
       (SELECT count(*) FROM (
            SELECT 1 FROM e CROSS JOIN LATERAL (
                SELECT 1 FROM {job} j WHERE j.name = e.name AND j.state = 'active'
                    AND j.expire_in = e.expire_in AND j.started_on >= now() - e.expire_in
                LIMIT %(cap1)s) r
            WHERE e.name = q.name AND e.expire_in IS NOT NULL LIMIT %(cap1)s) r) AS running,
       (SELECT count(*) FROM (
            SELECT 1 FROM e CROSS JOIN LATERAL (
                SELECT 1 FROM {job} j WHERE j.name = e.name AND j.state = 'active'
                    AND j.expire_in = e.expire_in AND j.started_on < now() - e.expire_in
                LIMIT %(cap1)s) s
            WHERE e.name = q.name AND e.expire_in IS NOT NULL LIMIT %(cap1)s) s) AS stuck
FROM {queue} q
WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
