-- Solid Queue's own FailedExecution#discard, on the chosen failed executions: with the failed row
-- locked, the job is destroyed (its execution rows go with it: ON DELETE CASCADE). A job retried
-- meanwhile has no failed execution any more and is left alone.
WITH chosen AS MATERIALIZED (
    SELECT f.job_id FROM {failed} f
    JOIN {jobs} j ON j.id = f.job_id
    WHERE (%(ids)s::bigint[] IS NULL OR f.job_id = ANY(%(ids)s::bigint[]))
      AND (%(queue)s::text IS NULL OR j.queue_name = %(queue)s::text)
    ORDER BY f.job_id LIMIT %(batch)s
    FOR UPDATE OF f SKIP LOCKED
)
DELETE FROM {jobs} j
USING chosen c
WHERE j.id = c.job_id AND EXISTS (SELECT 1 FROM {failed} f WHERE f.job_id = j.id)
RETURNING j.id
