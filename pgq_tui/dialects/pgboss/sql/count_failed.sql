-- Dead jobs (failed) per queue, through the index pgq-top advises, (name, completed_on) WHERE
-- state = 'failed'; each count stops at %(cap1)s rows.
SELECT q.name AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name AND j.state = 'failed'
            LIMIT %(cap1)s) f) AS dead
FROM {queue} q
WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
