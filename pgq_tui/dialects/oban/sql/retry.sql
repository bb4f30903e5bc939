-- Oban's own retry_job (Engine.retry_all_jobs), on discarded jobs (guard_discarded.sql): state
-- available, scheduled_at now (UTC), max_attempts raised to at least attempt + 1, completed_at,
-- cancelled_at and discarded_at cleared. Oban refuses available and executing jobs; pgq-top takes
-- discarded ones. The chosen rows are locked and the guard re-checked, so a job that changed
-- meanwhile is left alone.
{chosen}
UPDATE {jobs} j
SET state = 'available',
    max_attempts = greatest(j.max_attempts, j.attempt + 1),
    scheduled_at = now() AT TIME ZONE 'UTC',
    completed_at = NULL,
    cancelled_at = NULL,
    discarded_at = NULL
FROM chosen c
WHERE j.id = c.id AND ({guard})
RETURNING j.id
