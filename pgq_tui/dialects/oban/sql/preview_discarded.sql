-- Discarded jobs among the chosen ones (what a retry or a delete takes). None is executing.
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {jobs} j
WHERE j.state = 'discarded'
  AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
  AND (%(queue)s::text IS NULL OR j.queue = %(queue)s::text)
