-- Discarded jobs among the chosen ones (the jobs a retry would take). None is running.
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {jobs} j
WHERE j.state = 'discarded'
  AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
  AND (%(queue)s::text IS NULL OR j.queue = %(queue)s::text)
