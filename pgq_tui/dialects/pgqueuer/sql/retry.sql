-- Retry failed jobs with pgqueuer's own requeue transition (`pgq requeue`): queued, execute_after
-- now, attempts 0, queue_manager_id cleared, logged as queued. Guard, re-checked on the locked row:
-- status = 'failed'.
WITH chosen AS (
    SELECT j.id FROM {jobs} j
    WHERE j.status = 'failed'
      AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
      AND (%(queue)s::text IS NULL OR j.entrypoint = %(queue)s::text)
    ORDER BY j.id LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
), requeued AS (
    UPDATE {jobs} j
    SET status = 'queued', execute_after = now(), updated = now(), attempts = 0, queue_manager_id = NULL
    FROM chosen
    WHERE j.id = chosen.id AND j.status = 'failed'
    RETURNING j.id, j.entrypoint, j.priority
), logged AS (
    INSERT INTO {log} (job_id, status, entrypoint, priority)
    SELECT id, 'queued', entrypoint, priority FROM requeued
)
SELECT id FROM requeued
