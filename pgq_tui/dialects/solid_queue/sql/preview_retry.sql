-- Failed executions among the chosen jobs that a retry takes: those without a concurrency key (a
-- concurrency-limited job's dispatch takes Solid Queue's semaphore, which only its own code does).
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {failed} f
JOIN {jobs} j ON j.id = f.job_id
WHERE j.concurrency_key IS NULL
  AND (%(ids)s::bigint[] IS NULL OR f.job_id = ANY(%(ids)s::bigint[]))
  AND (%(queue)s::text IS NULL OR j.queue_name = %(queue)s::text)
