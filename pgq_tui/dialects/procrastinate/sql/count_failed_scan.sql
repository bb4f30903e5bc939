-- Dead (failed) jobs per queue when no index serves them (procrastinate's stock schema): one scan,
-- exact (cap1 is not used); in the poll while the table is small, else in the background counter
-- (monitor/tiers.py). The advised index makes it live (count_failed.sql).
SELECT j.queue_name::text AS queue, count(*) AS dead
FROM {jobs} j
WHERE j.status = 'failed'
GROUP BY j.queue_name
