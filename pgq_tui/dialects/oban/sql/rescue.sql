-- Oban's own Lifeline rescue (Engine.rescue_jobs), on the chosen stuck jobs (guard_stuck.sql):
-- available while attempt < max_attempts, else discarded with discarded_at now (UTC). The chosen
-- rows are locked and the guard re-checked.
{chosen}
UPDATE {jobs} j
SET state = CASE WHEN j.attempt < j.max_attempts THEN 'available' ELSE 'discarded' END::{state_type},
    discarded_at = CASE WHEN j.attempt < j.max_attempts THEN j.discarded_at ELSE now() AT TIME ZONE 'UTC' END
FROM chosen c
WHERE j.id = c.id AND ({guard})
RETURNING j.id
