-- Succeeded jobs (procrastinate keeps them) per queue: no index serves them, so one scan, exact (cap1
-- is not used); in the poll while the table is small, else in the background counter.
SELECT j.queue_name::text AS queue, count(*) AS done
FROM {jobs} j
WHERE j.status = 'succeeded'
GROUP BY j.queue_name
