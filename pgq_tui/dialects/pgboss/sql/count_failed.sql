-- Dead jobs (failed) per queue; each count stops at %(cap1)s rows. 10.x: through the index pgq-top
-- advises, (name, completed_on) INCLUDE (id) WHERE state = 'failed'; 12.38 (schema 46): job_i14's
-- failed range; 11.0-12.37: that advice, or a scan (Statement.indexed False).
SELECT q.name AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {job} j WHERE j.name = q.name AND j.state = 'failed'
            LIMIT %(cap1)s) f) AS dead
FROM {queue} q
WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
