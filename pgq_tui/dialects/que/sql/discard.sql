-- Que's own destroy (destroy_job, lib/que/job_methods.rb: DELETE FROM que_jobs WHERE id = $1) of the
-- chosen expired jobs; the guard is re-checked on the locked row.
{chosen}
DELETE FROM {jobs} j
USING chosen c
WHERE j.id = c.id AND ({guard})
RETURNING j.id
