-- Discard failed jobs: delete them, the transition procrastinate's own old-job cleanup makes
-- (delete_old_jobs); their events go with them (ON DELETE CASCADE). Guard, re-checked on the locked
-- row: status = 'failed'.
WITH chosen AS (
    SELECT j.id FROM {jobs} j
    WHERE j.status = 'failed'
      AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
      AND (%(queue)s::text IS NULL OR j.queue_name = %(queue)s::text)
    ORDER BY j.id LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
)
DELETE FROM {jobs} j USING chosen
WHERE j.id = chosen.id AND j.status = 'failed'
RETURNING j.id
