-- Solid Queue's own FailedExecution#retry, on the chosen failed executions: with the failed row
-- locked, the job's execution counters are reset (arguments.executions = 0,
-- arguments.exception_executions emptied, updated_at now), the job is prepared for execution again
-- (a ready execution when due, scheduled_at null or past; else a scheduled execution) with its
-- queue_name and priority, and the failed execution is deleted. Jobs with a concurrency key are
-- left alone (their dispatch takes Solid Queue's semaphore). A row retried or discarded meanwhile
-- is gone from the failed table and so is not touched. UTC timestamps, as Rails writes them.
WITH chosen AS MATERIALIZED (
    SELECT f.id AS failed_id, j.id, j.queue_name, j.priority, j.scheduled_at,
           j.scheduled_at IS NULL OR j.scheduled_at <= (now() AT TIME ZONE 'UTC') AS due
    FROM {failed} f
    JOIN {jobs} j ON j.id = f.job_id
    WHERE j.concurrency_key IS NULL
      AND (%(ids)s::bigint[] IS NULL OR f.job_id = ANY(%(ids)s::bigint[]))
      AND (%(queue)s::text IS NULL OR j.queue_name = %(queue)s::text)
    ORDER BY f.job_id LIMIT %(batch)s
    FOR UPDATE OF f, j SKIP LOCKED
), reset AS (
    UPDATE {jobs} j
    SET arguments = (coalesce(j.arguments::jsonb, jsonb_build_object())
                     || jsonb_build_object('executions', 0, 'exception_executions', jsonb_build_object()))::text,
        updated_at = now() AT TIME ZONE 'UTC'
    FROM chosen c WHERE j.id = c.id
    RETURNING j.id
), ready AS (
    INSERT INTO {ready} (job_id, queue_name, priority, created_at)
    SELECT c.id, c.queue_name, c.priority, now() AT TIME ZONE 'UTC' FROM chosen c WHERE c.due
    RETURNING job_id
), scheduled AS (
    INSERT INTO {scheduled} (job_id, queue_name, priority, scheduled_at, created_at)
    SELECT c.id, c.queue_name, c.priority, c.scheduled_at, now() AT TIME ZONE 'UTC' FROM chosen c WHERE NOT c.due
    RETURNING job_id
)
DELETE FROM {failed} f
USING chosen c
WHERE f.id = c.failed_id
RETURNING f.job_id AS id
