-- pg-boss 12 (schema 31+): ready, scheduled and blocked jobs per queue, and the oldest ready job's
-- age, read from pg-boss's own index job_i14 (name, state, blocked, start_after) WHERE state IN
-- ('created', 'retry', 'active', 'failed'), on job_common and on each partitioned queue's table.
-- Ready is pg-boss's fetch condition: created or retry, NOT blocked, start_after <= now(). Blocked
-- jobs wait for the jobs they depend on (a flow); scheduled ones for start_after. Queues come from
-- the queue table (pg-boss's internal __pgboss__ queues left out); each count stops at %(cap1)s rows.
SELECT q.name AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name
            AND j.state IN ('created', 'retry') AND NOT j.blocked AND j.start_after <= now()
            LIMIT %(cap1)s) r) AS ready,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name
            AND j.state IN ('created', 'retry') AND NOT j.blocked AND j.start_after > now()
            LIMIT %(cap1)s) s) AS scheduled,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name
            AND j.state IN ('created', 'retry') AND j.blocked
            LIMIT %(cap1)s) b) AS blocked,
       extract(epoch FROM now() - least(
           (SELECT min(j.start_after) FROM {job} j WHERE j.name = q.name AND j.state = 'created'
                AND NOT j.blocked AND j.start_after <= now()),
           (SELECT min(j.start_after) FROM {job} j WHERE j.name = q.name AND j.state = 'retry'
                AND NOT j.blocked AND j.start_after <= now())))::float8 AS oldest_ready_age_s
FROM {queue} q
WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
