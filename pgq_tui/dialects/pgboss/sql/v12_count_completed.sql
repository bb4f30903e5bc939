-- pg-boss 12: completed jobs still kept (pg-boss 11+ has no archive: it deletes them after
-- deletion_seconds), from pg-boss's index job_i16 (name, completed_on) WHERE completed_on IS NOT NULL,
-- which also holds failed and cancelled jobs; the count stops at %(cap1)s completed ones.
SELECT q.name AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name AND j.completed_on IS NOT NULL
            AND j.state = 'completed' LIMIT %(cap1)s) d) AS done
FROM {queue} q
WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
