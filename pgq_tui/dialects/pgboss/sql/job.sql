-- One job in full (a job pg-boss has archived or deleted is gone from here). Ids are uuids, shown
-- as text everywhere. The timeout is expire_in (an interval) before schema 25, expire_seconds after.
SELECT j.id::text AS id, j.name AS queue,
       CASE
            WHEN j.state < 'active' AND j.blocked THEN 'blocked'  -- [31+]
            WHEN j.state < 'active' AND j.start_after <= now() THEN 'ready'
            WHEN j.state < 'active' THEN 'scheduled'
            WHEN j.state = 'active' AND j.started_on + j.expire_in < now() THEN 'stuck'  -- [<25]
            WHEN j.state = 'active' AND (j.started_on + j.expire_seconds * interval '1 second' < now()  -- [25+]
                 OR coalesce(j.heartbeat_on + j.heartbeat_seconds * interval '1 second' < now(), false)  -- [30+]
                 ) THEN 'stuck'  -- [25+]
            WHEN j.state = 'active' THEN 'running'
            WHEN j.state = 'failed' THEN 'dead'
            WHEN j.state = 'completed' THEN 'done'
            ELSE j.state::text END AS state,
       j.state::text AS native_state, j.retry_count + 1 AS attempts, j.retry_limit + 1 AS max_attempts,
       j.start_after AS run_at, j.created_on AS created_at, j.started_on AS started_at,
       j.completed_on AS finished_at, NULL::text AS holder,
       CASE WHEN j.state = 'failed'
            THEN coalesce(j.output->>'message', j.output #>> '{{value,message}}', j.output::text) END AS error,
       j.data::text AS payload,
       jsonb_build_object('priority', j.priority, 'retry_delay', j.retry_delay,
                          'retry_backoff', j.retry_backoff,
                          'expire_in', j.expire_in::text,  -- [<25]
                          'expire_seconds', j.expire_seconds,  -- [25+]
                          'heartbeat_seconds', j.heartbeat_seconds, 'heartbeat_on', j.heartbeat_on,  -- [30+]
                          'blocked', j.blocked,  -- [31+]
                          'singleton_key', j.singleton_key, 'policy', j.policy,
                          'dead_letter', j.dead_letter, 'keep_until', j.keep_until, 'output', j.output)
           AS details
FROM {job} j
WHERE j.id = %(id)s::uuid
