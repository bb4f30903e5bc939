-- Oban's own delete_job (Engine.delete_all_jobs, never executing rows), on discarded jobs: the rows
-- are deleted. Locked first, the guard re-checked on each.
WITH chosen AS MATERIALIZED (
    SELECT j.id FROM {jobs} j
    WHERE j.state = 'discarded'
      AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
      AND (%(queue)s::text IS NULL OR j.queue = %(queue)s::text)
    ORDER BY j.id LIMIT %(batch)s
    FOR UPDATE OF j SKIP LOCKED
)
DELETE FROM {jobs} j
USING chosen c
WHERE j.id = c.id AND j.state = 'discarded'
RETURNING j.id
