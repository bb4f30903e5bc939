-- The failed jobs among the chosen ones, oldest failure first, locked (CTE chosen: name, id) for
-- retry.sql and discard.sql, each of which re-checks state = 'failed' on the locked row.
chosen AS (
    SELECT j.name, j.id FROM {job} j
    WHERE j.state = 'failed'
      AND (%(ids)s::uuid[] IS NULL OR j.id = ANY(%(ids)s::uuid[]))
      AND (%(queue)s::text IS NULL OR j.name = %(queue)s::text)
    ORDER BY j.completed_on LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
)
