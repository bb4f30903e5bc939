-- The rows a guarded action takes (dialects/guarded.py): those its guard admits ({guard}, the
-- dialect's own condition on job row j), among the chosen ids (NULL: every one) and in the chosen
-- queue (NULL: every queue; {queue_column} is the dialect's queue column).
({guard})
  AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
  AND (%(queue)s::text IS NULL OR j.{queue_column} = %(queue)s::text)
