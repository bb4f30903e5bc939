-- pg-boss 12.19-12.37 (schema 31-45) without job_i14: ready, scheduled and blocked jobs per queue and
-- the oldest ready job's age, by one scan of the queued rows (the fetch index job_i5 leaves blocked
-- jobs out), exact (cap1 is not used); in the poll while the table is small, else in the background.
SELECT j.name AS queue,
       count(*) FILTER (WHERE NOT j.blocked AND j.start_after <= now()) AS ready,
       count(*) FILTER (WHERE NOT j.blocked AND j.start_after > now()) AS scheduled,
       count(*) FILTER (WHERE j.blocked) AS blocked,
       extract(epoch FROM now() - min(j.start_after) FILTER (WHERE NOT j.blocked
           AND j.start_after <= now()))::float8 AS oldest_ready_age_s
FROM {job} j
WHERE j.state < 'active' AND j.name NOT LIKE '\_\_pgboss\_\_%%'
GROUP BY j.name
