-- Rescue stuck active jobs with the transition pg-boss 11 and 12's supervisor makes (failJobsByTimeout
-- and, from schema 30, failJobsByHeartbeat, through failJobs): back to retry while retry_count <
-- retry_limit (start_after per its retry delay, backoff and retry_delay_max, in the version's own
-- formula: delay + backoff before schema 27, delay * backoff from 27 (12.6), at least 1 s * backoff
-- from 37 (12.26)), else failed with completed_on (and a copy sent to the queue's dead-letter queue,
-- if set); from 30 heartbeat_on cleared; output names the rule. pg-boss deletes and re-inserts the
-- row; this updates it in place to the same values (same id). retry_count is left alone: pg-boss
-- counts an attempt when a worker claims the job again.
-- Guard, re-checked on the locked row: active, and past its timeout (or its heartbeat).
WITH chosen AS (
    SELECT j.name, j.id FROM {job} j
    WHERE j.state = 'active'
      AND (j.started_on + j.expire_seconds * interval '1 second' < now()
           OR coalesce(j.heartbeat_on + j.heartbeat_seconds * interval '1 second' < now(), false)  -- [30+]
           )
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
            ELSE now() + least(j.retry_delay_max,
                j.retry_delay + (  -- [<27]
                j.retry_delay * (  -- [27-36]
                greatest(j.retry_delay, 1) * (  -- [37+]
                    2 ^ least(16, j.retry_count + 1) / 2
                    + 2 ^ least(16, j.retry_count + 1) / 2 * random())) * interval '1 second'
        END,
        completed_on = CASE WHEN j.retry_count < j.retry_limit THEN NULL ELSE now() END,
        heartbeat_on = NULL,  -- [30+]
        output = CASE WHEN j.started_on + j.expire_seconds * interval '1 second' < now()
                      THEN '{{"value": {{"message": "job timed out (rescued by pgq-top)"}}}}'::jsonb
                      ELSE '{{"value": {{"message": "job heartbeat timeout (rescued by pgq-top)"}}}}'::jsonb
                 END
    FROM chosen
    WHERE j.name = chosen.name AND j.id = chosen.id
      AND j.state = 'active'
      AND (j.started_on + j.expire_seconds * interval '1 second' < now()
           OR coalesce(j.heartbeat_on + j.heartbeat_seconds * interval '1 second' < now(), false)  -- [30+]
           )
    RETURNING j.id, j.state, j.name, j.dead_letter, j.priority, j.data, j.singleton_key, j.output
), dead_lettered AS (
    INSERT INTO {job} (name, data, output, retry_limit, retry_backoff, retry_delay,  -- [<30]
                       keep_until, deletion_seconds)  -- [<30]
    SELECT r.dead_letter, r.data, r.output, q.retry_limit, q.retry_backoff, q.retry_delay,  -- [<30]
           now() + q.retention_seconds * interval '1 second', q.deletion_seconds  -- [<30]
    INSERT INTO {job} (name, priority, data, retry_limit, retry_backoff, retry_delay, start_after,  -- [30+]
                       keep_until, deletion_seconds, expire_seconds, singleton_key, heartbeat_seconds)  -- [30+]
    SELECT r.dead_letter, r.priority, r.data, q.retry_limit, q.retry_backoff, q.retry_delay, now(),  -- [30+]
           now() + q.retention_seconds * interval '1 second', q.deletion_seconds, q.expire_seconds,  -- [30+]
           r.singleton_key, q.heartbeat_seconds  -- [30+]
    FROM rescued r JOIN {queue} q ON q.name = r.dead_letter
    WHERE r.state = 'failed'
)
SELECT id::text AS id FROM rescued
