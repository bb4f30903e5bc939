-- Rescue expired active jobs with the transition pg-boss's own supervisor makes (failJobsByTimeout):
-- back to retry while retry_count < retry_limit (start_after per its retry delay and backoff), else
-- failed with completed_on (and copied to the queue's dead-letter queue, if set), output noting the
-- timeout. Guard, re-checked on the locked row: active, started_on + expire_in < now().
WITH chosen AS (
    SELECT j.name, j.id FROM {job} j
    WHERE j.state = 'active' AND j.started_on + j.expire_in < now()
      AND (%(ids)s::uuid[] IS NULL OR j.id = ANY(%(ids)s::uuid[]))
      AND (%(queue)s::text IS NULL OR j.name = %(queue)s::text)
    ORDER BY j.started_on LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
), rescued AS (
    UPDATE {job} j
    SET state = CASE WHEN j.retry_count < j.retry_limit THEN 'retry' ELSE 'failed' END::{job_state},
        start_after = CASE
            WHEN j.retry_count = j.retry_limit THEN j.start_after
            WHEN NOT j.retry_backoff THEN now() + j.retry_delay * interval '1 second'
            ELSE now() + (j.retry_delay * 2 ^ least(16, j.retry_count + 1) / 2
                          + j.retry_delay * 2 ^ least(16, j.retry_count + 1) / 2 * random()) * interval '1 second'
        END,
        completed_on = CASE WHEN j.retry_count < j.retry_limit THEN NULL ELSE now() END,
        output = '{{"value": {{"message": "job failed by timeout in active state (rescued by pgq-top)"}}}}'::jsonb
    FROM chosen
    WHERE j.name = chosen.name AND j.id = chosen.id
      AND j.state = 'active' AND j.started_on + j.expire_in < now()
    RETURNING j.id, j.state, j.dead_letter, j.name, j.data, j.output, j.retry_limit, j.keep_until,
              j.start_after
), dead_lettered AS (
    INSERT INTO {job} (name, data, output, retry_limit, keep_until)
    SELECT dead_letter, data, output, retry_limit, keep_until + (keep_until - start_after)
    FROM rescued
    WHERE state = 'failed' AND dead_letter IS NOT NULL AND name <> dead_letter
)
SELECT id::text AS id FROM rescued
