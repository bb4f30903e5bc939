-- Completed jobs still in the job table (10.x moves them to its archive after
-- archiveCompletedAfterSeconds; 11+ has no archive and deletes them after deletion_seconds); each
-- count stops at %(cap1)s rows. 10.x: through the index pgq-top advises, (name, completed_on) WHERE
-- state = 'completed'; 12.38 (schema 46): pg-boss's job_i16 (name, completed_on) WHERE completed_on
-- IS NOT NULL, which also holds failed and cancelled jobs. The walk is in the index's order
-- (completed_on): without it the planner chose a scan of the queue's rows under a LIMIT, since most
-- rows are completed (88 ms a poll at 1M rows in 50 queues, against 31 ms through job_i16).
SELECT q.name AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name AND j.completed_on IS NOT NULL
            AND j.state = 'completed' ORDER BY j.completed_on DESC LIMIT %(cap1)s) d) AS done
FROM {queue} q
WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
