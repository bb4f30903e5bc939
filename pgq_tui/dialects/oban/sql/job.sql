-- One job in full: its state in Oban's words and in pgq-top's, Oban's own fields in `details`
-- (its `errors` array is the detail's attempt history: attempts.sql).
SELECT j.id, j.queue,
       CASE j.state::text
            WHEN 'available' THEN 'ready'
            WHEN 'scheduled' THEN 'scheduled'
            WHEN 'retryable' THEN 'scheduled'
            WHEN 'executing' THEN CASE WHEN j.attempted_at >= (now() AT TIME ZONE 'UTC')
                                                               - make_interval(secs => {rescue_after_s})
                                       THEN 'running' ELSE 'stuck' END
            WHEN 'discarded' THEN 'dead'
            WHEN 'completed' THEN 'done'
            ELSE j.state::text END AS state,
       j.state::text AS native_state, j.attempt AS attempts, j.max_attempts,
       j.scheduled_at AT TIME ZONE 'UTC' AS run_at, j.inserted_at AT TIME ZONE 'UTC' AS created_at,
       j.attempted_at AT TIME ZONE 'UTC' AS started_at,
       coalesce(j.completed_at, j.discarded_at, j.cancelled_at) AT TIME ZONE 'UTC' AS finished_at,
       array_to_string(j.attempted_by, ' ') AS holder,
       j.errors[array_upper(j.errors, 1)] ->> 'error' AS error,
       j.args::text AS payload,
       jsonb_build_object('worker', j.worker, 'priority', j.priority, 'tags', to_jsonb(j.tags),
                          'meta', j.meta, 'attempted_by', to_jsonb(j.attempted_by),
                          'rescue_after', make_interval(secs => {rescue_after_s})::text) AS details
FROM {jobs} j
WHERE j.id = %(id)s::bigint
