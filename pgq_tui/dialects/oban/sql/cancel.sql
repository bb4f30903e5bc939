-- Oban's own cancel_job (Engine.cancel_all_jobs) on waiting jobs (guard_waiting.sql): state
-- cancelled, cancelled_at now (UTC). Oban's guard is "not cancelled, completed or discarded"; pgq-top
-- also leaves executing jobs alone: stopping one needs Oban's pkill signal to its producer, which
-- pgq-top is not.
{chosen}
UPDATE {jobs} j
SET state = 'cancelled', cancelled_at = now() AT TIME ZONE 'UTC'
FROM chosen c
WHERE j.id = c.id AND ({guard})
RETURNING j.id
