-- Discard failed jobs (guard_failed.sql): delete them, the transition procrastinate's own old-job
-- cleanup makes (delete_old_jobs); their events go with them (ON DELETE CASCADE). The guard is
-- re-checked on the locked row.
{chosen}
DELETE FROM {jobs} j USING chosen c
WHERE j.id = c.id AND ({guard})
RETURNING j.id
