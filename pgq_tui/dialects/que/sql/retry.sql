-- Que's own documented retry of an expired job (docs/README.md, "Expired jobs": `UPDATE que_jobs SET
-- error_count = 0, expired_at = NULL WHERE id = ...`), nothing else: run_at is left as it is (an
-- expired job's run_at has passed, so it is ready at once; an errored job keeps its retry_in
-- backoff). The guard is re-checked on the locked row.
{chosen}
UPDATE {jobs} j
SET error_count = 0, expired_at = NULL
FROM chosen c
WHERE j.id = c.id AND ({guard})
RETURNING j.id
