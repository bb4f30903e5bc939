-- Discard failed jobs with pg-boss's own delete (boss.deleteJob), guarded: state = 'failed', re-checked
-- on the locked row.
WITH chosen AS (
    SELECT j.name, j.id FROM {job} j
    WHERE j.state = 'failed'
      AND (%(ids)s::uuid[] IS NULL OR j.id = ANY(%(ids)s::uuid[]))
      AND (%(queue)s::text IS NULL OR j.name = %(queue)s::text)
    ORDER BY j.completed_on LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
)
DELETE FROM {job} j USING chosen
WHERE j.name = chosen.name AND j.id = chosen.id AND j.state = 'failed'
RETURNING j.id::text AS id
