-- Successful workflows (SUCCESS, kept until DBOS's retention sweep deletes them) per queue: no index
-- serves them, so one scan, exact (cap1 is not used); in the poll while the table is small, else in
-- the background counter.
SELECT {queue}::text AS queue, count(*) AS done
FROM {ws} j
WHERE j.status = 'SUCCESS'
GROUP BY 1
