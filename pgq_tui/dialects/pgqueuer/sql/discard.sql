-- Discard failed jobs (guard_failed.sql) with pgqueuer's own delete transition: the rows are deleted
-- and logged as `deleted`. The guard is re-checked on each locked row.
{chosen}, deleted AS (
    DELETE FROM {jobs} j USING chosen c
    WHERE j.id = c.id AND ({guard})
    RETURNING j.id, j.entrypoint, j.priority
), logged AS (
    INSERT INTO {log} (job_id, status, entrypoint, priority)
    SELECT id, 'deleted', entrypoint, priority FROM deleted
)
SELECT id FROM deleted
