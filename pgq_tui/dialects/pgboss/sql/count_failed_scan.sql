-- Dead (failed) jobs per queue when no index serves them: one scan, exact (cap1 is not used); in the
-- poll while the table is small, else in the background counter. The advised index makes it live.
SELECT j.name AS queue, count(*) AS dead
FROM {job} j
WHERE j.state = 'failed' AND j.name NOT LIKE '\_\_pgboss\_\_%%'
GROUP BY j.name
