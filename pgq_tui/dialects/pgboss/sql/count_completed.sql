-- pg-boss 10: completed jobs still in the job table (it moves them to its archive after
-- archiveCompletedAfterSeconds), each count stopping at %(cap1)s rows, through the index pgq-top
-- advises, (name, completed_on) WHERE state = 'completed' (11 and 12 count them by
-- count_completed_scan.sql whatever the indexes: modern.py). The walk is in the index's order
-- (completed_on): under the LIMIT the planner may otherwise scan the queue's rows, since most rows
-- are completed (measured on 12.38's job_i16 when it read this file: 88 ms a poll at 1M rows in 50
-- queues, against 31 ms in index order).
SELECT q.name AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name AND j.completed_on IS NOT NULL
            AND j.state = 'completed' ORDER BY j.completed_on DESC LIMIT %(cap1)s) d) AS done
FROM {queue} q
WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
