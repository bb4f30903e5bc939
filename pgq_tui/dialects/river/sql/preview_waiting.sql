-- Waiting jobs among the chosen ones (available, scheduled, retryable, pending): the jobs a cancel
-- takes. None is running.
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {jobs} j
WHERE j.state IN ('available', 'scheduled', 'retryable', 'pending') AND j.finalized_at IS NULL
  AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
  AND (%(queue)s::text IS NULL OR j.queue = %(queue)s::text)
