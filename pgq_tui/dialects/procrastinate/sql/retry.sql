-- Retry failed jobs with procrastinate's own function procrastinate_retry_job(job_id, retry_at =>
-- now()): back to todo, attempts + 1. The chosen rows are locked first with the guard (failed); the
-- function re-checks the status on the locked row.
WITH chosen AS MATERIALIZED (
    SELECT j.id FROM {jobs} j
    WHERE j.status = 'failed'
      AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
      AND (%(queue)s::text IS NULL OR j.queue_name = %(queue)s::text)
    ORDER BY j.id LIMIT %(batch)s
    FOR UPDATE OF j SKIP LOCKED
)
SELECT c.id FROM chosen c
CROSS JOIN LATERAL {retry_job}(c.id, now(), NULL::int, NULL::varchar, NULL::varchar) AS r
