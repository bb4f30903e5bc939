-- The workflows a guarded action takes: those its guard admits ({guard}, on row j), never a finished
-- one (DBOS's own guard: status not SUCCESS or ERROR), among the chosen ids (NULL: every one) and in
-- the chosen queue (NULL: every queue; a queue's label as the counts show it).
({guard})
  AND j.status NOT IN ('SUCCESS', 'ERROR')
  AND (%(ids)s::text[] IS NULL OR j.workflow_uuid = ANY(%(ids)s::text[]))
  AND (%(queue)s::text IS NULL OR {queue} = %(queue)s::text)
