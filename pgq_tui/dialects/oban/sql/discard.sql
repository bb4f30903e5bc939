-- Oban's own delete_job (Engine.delete_all_jobs, never executing rows), on discarded jobs
-- (guard_discarded.sql): the rows are deleted. Locked first, the guard re-checked on each.
{chosen}
DELETE FROM {jobs} j
USING chosen c
WHERE j.id = c.id AND ({guard})
RETURNING j.id
