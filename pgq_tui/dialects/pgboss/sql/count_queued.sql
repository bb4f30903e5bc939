-- Ready (created or retry, start_after < now(): pg-boss's own fetch condition) and scheduled (start_after
-- later) jobs per queue, read only from pg-boss's own fetch index job_i5 (name, start_after) INCLUDE
-- (priority, created_on, id) WHERE state < 'active', on every queue's partition. Queues come from the
-- queue table (pg-boss's internal __pgboss__ queues left out); each count stops at %(cap1)s rows and
-- the oldest ready job is the first entry of the ready range.
SELECT q.name AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name AND j.state < 'active'
            AND j.start_after < now() LIMIT %(cap1)s) r) AS ready,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name AND j.state < 'active'
            AND j.start_after >= now() LIMIT %(cap1)s) s) AS scheduled,
       (SELECT extract(epoch FROM now() - j.start_after)::float8 FROM {job} j
        WHERE j.name = q.name AND j.state < 'active' AND j.start_after < now()
        ORDER BY j.start_after LIMIT 1) AS oldest_ready_age_s
FROM {queue} q
WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
