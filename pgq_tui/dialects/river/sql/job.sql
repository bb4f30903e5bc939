-- One job in full: its state in River's words and in pgq-top's, River's own fields in `details`
-- (its `errors` array is the detail's attempt history: attempts.sql).
SELECT j.id, j.queue,
       CASE j.state::text
            WHEN 'available' THEN CASE WHEN j.scheduled_at <= now() THEN 'ready' ELSE 'scheduled' END
            WHEN 'scheduled' THEN 'scheduled'
            WHEN 'retryable' THEN 'scheduled'
            WHEN 'running' THEN CASE WHEN j.attempted_at >= now() - make_interval(secs => {rescue_after_s})
                                     THEN 'running' ELSE 'stuck' END
            WHEN 'discarded' THEN 'dead'
            WHEN 'completed' THEN 'done'
            ELSE j.state::text END AS state,
       j.state::text AS native_state, j.attempt::int AS attempts, j.max_attempts::int AS max_attempts,
       j.scheduled_at AS run_at, j.created_at, j.attempted_at AS started_at, j.finalized_at AS finished_at,
       j.attempted_by[array_upper(j.attempted_by, 1)] AS holder,
       j.errors[array_upper(j.errors, 1)] ->> 'error' AS error,
       j.args::text AS payload,
       jsonb_build_object('kind', j.kind, 'priority', j.priority, 'tags', to_jsonb(j.tags),
                          'attempted_by', to_jsonb(j.attempted_by), 'metadata', j.metadata,
                          'rescue_horizon', make_interval(secs => {rescue_after_s})::text) AS details
FROM {jobs} j
WHERE j.id = %(id)s::bigint
