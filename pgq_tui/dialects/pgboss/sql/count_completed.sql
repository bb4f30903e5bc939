-- Completed jobs still in the job table (pg-boss moves them to its archive after
-- archiveCompletedAfterSeconds), through the index pgq-top advises, (name, completed_on) WHERE
-- state = 'completed'; each count stops at %(cap1)s rows.
SELECT q.name AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name AND j.state = 'completed'
            LIMIT %(cap1)s) d) AS done
FROM {queue} q
WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
