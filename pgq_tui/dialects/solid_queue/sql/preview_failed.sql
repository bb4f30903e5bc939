-- Failed executions among the chosen jobs (what a retry or a discard takes). None is running.
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {failed} f
JOIN {jobs} j ON j.id = f.job_id
WHERE (%(ids)s::bigint[] IS NULL OR f.job_id = ANY(%(ids)s::bigint[]))
  AND (%(queue)s::text IS NULL OR j.queue_name = %(queue)s::text)
