-- pg-boss 11 and 12 (schema 25+): ready, scheduled and (31+) blocked jobs per queue, and the oldest
-- ready job's age; each count stops at %(cap1)s rows. Ready is pg-boss's fetch condition: created or
-- retry (state < 'active'), start_after passed, and from schema 31 (12.19, flows) NOT blocked; blocked
-- jobs wait for the jobs they depend on, scheduled ones for start_after. Before 31 this reads
-- pg-boss's fetch index job_i5 (name, start_after) WHERE state < 'active' alone; from 31 pg-boss's
-- job_i14 (name, state, blocked, start_after) WHERE state IN ('created', 'retry', 'active', 'failed')
-- (schema 46, 12.38), on job_common and on each partitioned queue's table. Queues come from the
-- queue table (pg-boss's internal __pgboss__ queues left out).
-- The ready rows are read once for their count and their age (`c`, and `r` for retry from 31): the
-- first %(cap1)s in start_after order, counted, the first of them the oldest. The front of a ready
-- range is where each fetched job left a dead index entry until autovacuum comes, a heap visit each:
-- walked once, not once for the age and again for the count (#35: 4,500 such visits a walk at 10M
-- rows under a 200 jobs/s fleet).
SELECT q.name AS queue,
       least(c.n, %(cap1)s::bigint) AS ready,  -- [<31]
       least(c.n + r.n, %(cap1)s::bigint) AS ready,  -- [31+]
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name
            AND j.state < 'active'  -- [<31]
            AND j.state IN ('created', 'retry') AND NOT j.blocked  -- [31+]
            AND j.start_after > now()
            LIMIT %(cap1)s) s) AS scheduled,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name  -- [31+]
            AND j.state IN ('created', 'retry') AND j.blocked  -- [31+]
            LIMIT %(cap1)s) b) AS blocked,  -- [31+]
       extract(epoch FROM now() - c.oldest)::float8 AS oldest_ready_age_s  -- [<31]
       extract(epoch FROM now() - least(c.oldest, r.oldest))::float8 AS oldest_ready_age_s  -- [31+]
FROM {queue} q
CROSS JOIN LATERAL (
    SELECT count(*) AS n, min(x.start_after) AS oldest FROM (
        SELECT j.start_after FROM {job} j WHERE j.name = q.name
            AND j.state < 'active'  -- [<31]
            AND j.state = 'created' AND NOT j.blocked  -- [31+]
            AND j.start_after <= now()
        ORDER BY j.start_after LIMIT %(cap1)s) x
) c
CROSS JOIN LATERAL (  -- [31+]
    SELECT count(*) AS n, min(x.start_after) AS oldest FROM (  -- [31+]
        SELECT j.start_after FROM {job} j WHERE j.name = q.name  -- [31+]
            AND j.state = 'retry' AND NOT j.blocked AND j.start_after <= now()  -- [31+]
        ORDER BY j.start_after LIMIT %(cap1)s) x  -- [31+]
) r  -- [31+]
WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
