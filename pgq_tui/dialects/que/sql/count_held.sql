-- Running and stuck jobs: every Que lock (locks.sql, a few rows of pg_locks) whose key is a que_jobs
-- id of a job not finished and not expired, each looked up by its primary key; stuck by the rule in
-- locks.sql (its locker unregistered, or its backend idle longer than que_stuck_after).
SELECT j.queue::text AS queue, count(*) FILTER (WHERE NOT h.stuck) AS running,
       count(*) FILTER (WHERE h.stuck) AS stuck
FROM {locks} h JOIN {jobs} j ON j.id = h.id
WHERE j.finished_at IS NULL AND j.expired_at IS NULL
GROUP BY j.queue
