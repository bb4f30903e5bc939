-- Running and stuck jobs per queue when no index serves active jobs (pg-boss 10's stock schema): one
-- scan of the active rows of every partition of `job`, exact (cap1 is not used); in the poll while the
-- table is small, else in the background counter (monitor/tiers.py). Stuck is pg-boss's own rule:
-- active past started_on + expire_in. The advised index makes the figure live (count_active.sql).
SELECT j.name AS queue,
       count(*) FILTER (WHERE j.started_on >= now() - j.expire_in) AS running,
       count(*) FILTER (WHERE j.started_on < now() - j.expire_in) AS stuck
FROM {job} j
WHERE j.state = 'active' AND j.name NOT LIKE '\_\_pgboss\_\_%%'
GROUP BY j.name
