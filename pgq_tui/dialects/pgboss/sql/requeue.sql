-- Rescue stuck active jobs with the transition pg-boss's own supervisor makes (failJobsByTimeout and,
-- from schema 30, failJobsByHeartbeat, through failJobs): back to retry while retry_count <
-- retry_limit (start_after per its retry delay, backoff and, from 25, retry_delay_max, in the
-- version's own formula: delay * backoff in 10.x, delay + backoff on 25-26 (11.0-12.5), delay *
-- backoff from 27 (12.6), at least 1 s * backoff from 37 (12.26)), else failed with completed_on (and
-- a copy sent to the queue's dead-letter queue, if set, with the columns that version's copy sets:
-- 11.0-12.27 (25-37) copy data and output with the queue's retry settings, 12.38 (46) also priority,
-- singleton_key and the queue's timeouts; 38-45, between the releases read, get 12.38's);
-- from 30 heartbeat_on cleared; output names the rule. pg-boss deletes and re-inserts the row from 11
-- on; this updates it in place to the same values (same id). retry_count is left alone from 11 on:
-- pg-boss counts an attempt when a worker claims the job again.
-- Guard, re-checked on the locked row: active, and past its timeout (the timeout is expire_in, an
-- interval, before schema 25, expire_seconds after) or, from 30, its heartbeat.
WITH chosen AS (
    SELECT j.name, j.id FROM {job} j
    WHERE {stuck}
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
            ELSE now() + (j.retry_delay * (  -- [<25]
            ELSE now() + least(j.retry_delay_max, j.retry_delay + (  -- [25-26]
            ELSE now() + least(j.retry_delay_max, j.retry_delay * (  -- [27-36]
            ELSE now() + least(j.retry_delay_max, greatest(j.retry_delay, 1) * (  -- [37+]
                    2 ^ least(16, j.retry_count + 1) / 2
                    + 2 ^ least(16, j.retry_count + 1) / 2 * random())) * interval '1 second'
        END,
        completed_on = CASE WHEN j.retry_count < j.retry_limit THEN NULL ELSE now() END,
        heartbeat_on = NULL,  -- [30+]
        output = '{{"value": {{"message": "job failed by timeout in active state (rescued by pgq-top)"}}}}'::jsonb  -- [<25]
        output = CASE WHEN j.started_on + j.expire_seconds * interval '1 second' < now()  -- [25+]
                      THEN '{{"value": {{"message": "job timed out (rescued by pgq-top)"}}}}'::jsonb  -- [25+]
                      ELSE '{{"value": {{"message": "job heartbeat timeout (rescued by pgq-top)"}}}}'::jsonb  -- [25+]
                 END  -- [25+]
    FROM chosen
    WHERE j.name = chosen.name AND j.id = chosen.id
      AND {stuck}
    RETURNING j.id, j.state, j.name, j.dead_letter, j.priority, j.data, j.singleton_key, j.output,
              j.retry_limit, j.keep_until, j.start_after
), dead_lettered AS (
    INSERT INTO {job} (name, data, output, retry_limit, keep_until)  -- [<25]
    SELECT r.dead_letter, r.data, r.output, r.retry_limit, r.keep_until + (r.keep_until - r.start_after)  -- [<25]
    FROM rescued r  -- [<25]
    WHERE r.state = 'failed' AND r.dead_letter IS NOT NULL AND r.name <> r.dead_letter  -- [<25]
    INSERT INTO {job} (name, data, output, retry_limit, retry_backoff, retry_delay,  -- [25-37]
                       keep_until, deletion_seconds)  -- [25-37]
    SELECT r.dead_letter, r.data, r.output, q.retry_limit, q.retry_backoff, q.retry_delay,  -- [25-37]
           now() + q.retention_seconds * interval '1 second', q.deletion_seconds  -- [25-37]
    INSERT INTO {job} (name, priority, data, retry_limit, retry_backoff, retry_delay, start_after,  -- [38+]
                       keep_until, deletion_seconds, expire_seconds, singleton_key, heartbeat_seconds)  -- [38+]
    SELECT r.dead_letter, r.priority, r.data, q.retry_limit, q.retry_backoff, q.retry_delay, now(),  -- [38+]
           now() + q.retention_seconds * interval '1 second', q.deletion_seconds, q.expire_seconds,  -- [38+]
           r.singleton_key, q.heartbeat_seconds  -- [38+]
    FROM rescued r JOIN {queue} q ON q.name = r.dead_letter  -- [25+]
    WHERE r.state = 'failed'  -- [25+]
)
SELECT id::text AS id FROM rescued
