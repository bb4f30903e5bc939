-- Failed jobs among the chosen ones.
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {jobs} j
WHERE j.status = 'failed'
  AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
  AND (%(queue)s::text IS NULL OR j.queue_name = %(queue)s::text)
