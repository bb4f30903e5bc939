-- Discard failed jobs with pgqueuer's own delete transition: the rows are deleted and logged as
-- `deleted`. Guard, re-checked on the locked row: status = 'failed'.
WITH chosen AS (
    SELECT j.id FROM {jobs} j
    WHERE j.status = 'failed'
      AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
      AND (%(queue)s::text IS NULL OR j.entrypoint = %(queue)s::text)
    ORDER BY j.id LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
), deleted AS (
    DELETE FROM {jobs} j USING chosen
    WHERE j.id = chosen.id AND j.status = 'failed'
    RETURNING j.id, j.entrypoint, j.priority
), logged AS (
    INSERT INTO {log} (job_id, status, entrypoint, priority)
    SELECT id, 'deleted', entrypoint, priority FROM deleted
)
SELECT id FROM deleted
