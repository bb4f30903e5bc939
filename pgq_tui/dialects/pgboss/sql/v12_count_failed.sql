-- pg-boss 12: dead (failed) jobs per queue, from job_i14's failed range; each count stops at %(cap1)s.
SELECT q.name AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name AND j.state = 'failed'
            LIMIT %(cap1)s) f) AS dead
FROM {queue} q
WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
