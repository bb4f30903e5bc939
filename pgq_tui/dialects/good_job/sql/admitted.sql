-- The jobs a guarded action takes: those its guard admits ({guard}, on row j), among the chosen ids
-- (NULL: every one) and in the chosen queue (NULL: every queue).
({guard})
  AND (%(ids)s::text[] IS NULL OR j.id::text = ANY(%(ids)s::text[]))
  AND (%(queue)s::text IS NULL OR j.queue_name = %(queue)s::text)
