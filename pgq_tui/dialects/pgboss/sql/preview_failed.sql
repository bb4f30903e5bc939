-- Failed jobs among the chosen ones.
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {job} j
WHERE j.state = 'failed'
  AND (%(ids)s::uuid[] IS NULL OR j.id = ANY(%(ids)s::uuid[]))
  AND (%(queue)s::text IS NULL OR j.name = %(queue)s::text)
