-- Waiting jobs among the chosen ones (available, scheduled, retryable, suspended): what a cancel
-- takes. None is executing.
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {jobs} j
WHERE j.state IN ({waiting})
  AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
  AND (%(queue)s::text IS NULL OR j.queue = %(queue)s::text)
