-- pg-boss 11 and 12 (schema 25+): ready, scheduled and (31+) blocked jobs per queue, and the oldest
-- ready job's age; each count stops at %(cap1)s rows. Ready is pg-boss's fetch condition: created or
-- retry (state < 'active'), start_after passed, and from schema 31 (12.19, flows) NOT blocked; blocked
-- jobs wait for the jobs they depend on, scheduled ones for start_after. Before 31 this reads
-- pg-boss's fetch index job_i5 (name, start_after) WHERE state < 'active' alone; from 31 pg-boss's
-- job_i14 (name, state, blocked, start_after) WHERE state IN ('created', 'retry', 'active', 'failed')
-- (schema 46, 12.38), on job_common and on each partitioned queue's table. Queues come from the
-- queue table (pg-boss's internal __pgboss__ queues left out).
SELECT q.name AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name
            AND j.state < 'active'  -- [<31]
            AND j.state IN ('created', 'retry') AND NOT j.blocked  -- [31+]
            AND j.start_after <= now()
            LIMIT %(cap1)s) r) AS ready,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name
            AND j.state < 'active'  -- [<31]
            AND j.state IN ('created', 'retry') AND NOT j.blocked  -- [31+]
            AND j.start_after > now()
            LIMIT %(cap1)s) s) AS scheduled,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name  -- [31+]
            AND j.state IN ('created', 'retry') AND j.blocked  -- [31+]
            LIMIT %(cap1)s) b) AS blocked,  -- [31+]
       extract(epoch FROM now() - least(
           (SELECT min(j.start_after) FROM {job} j WHERE j.name = q.name AND j.state < 'active'  -- [<31]
                AND j.start_after <= now())  -- [<31]
           (SELECT min(j.start_after) FROM {job} j WHERE j.name = q.name AND j.state = 'created'  -- [31+]
                AND NOT j.blocked AND j.start_after <= now()),  -- [31+]
           (SELECT min(j.start_after) FROM {job} j WHERE j.name = q.name AND j.state = 'retry'  -- [31+]
                AND NOT j.blocked AND j.start_after <= now())  -- [31+]
       ))::float8 AS oldest_ready_age_s
FROM {queue} q
WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
