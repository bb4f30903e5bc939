-- Back to the queue, logged as queued, with pgqueuer's own transitions: for failed jobs
-- (guard_failed.sql) its requeue (`pgq requeue`: attempts 0), for stale picked ones (guard_stale.sql)
-- the transition its own retry makes (attempts + 1); both queued, execute_after now,
-- queue_manager_id cleared. pgqueuer's workers would also re-pick a stale job themselves, but only a
-- worker serving its entrypoint. The guard is re-checked on each locked row.
{chosen}, requeued AS (
    UPDATE {jobs} j
    SET status = 'queued', execute_after = now(), updated = now(), queue_manager_id = NULL,
        attempts = CASE WHEN j.status = 'failed' THEN 0 ELSE j.attempts + 1 END
    FROM chosen c
    WHERE j.id = c.id AND ({guard})
    RETURNING j.id, j.entrypoint, j.priority
), logged AS (
    INSERT INTO {log} (job_id, status, entrypoint, priority)
    SELECT id, 'queued', entrypoint, priority FROM requeued
)
SELECT id FROM requeued
