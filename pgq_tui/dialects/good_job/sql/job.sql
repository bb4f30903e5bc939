-- One job in full: its state in good_job's words (its scopes) and pgq-top's, good_job's own fields
-- in `details`.
SELECT j.id::text AS id, j.queue_name::text AS queue,
       CASE WHEN j.finished_at IS NOT NULL AND j.error IS NOT NULL THEN 'dead'
            WHEN j.finished_at IS NOT NULL THEN 'done'
            WHEN j.performed_at IS NOT NULL AND j.locked_by_id IS NULL THEN 'released'
            WHEN j.performed_at IS NOT NULL THEN CASE WHEN ({stuck}) THEN 'stuck' ELSE 'running' END
            WHEN j.scheduled_at > {utcnow} THEN 'scheduled'
            ELSE 'ready' END AS state,
       CASE WHEN j.finished_at IS NOT NULL AND j.error IS NOT NULL THEN 'discarded'
            WHEN j.finished_at IS NOT NULL THEN 'succeeded'
            WHEN j.performed_at IS NOT NULL THEN 'running'
            WHEN j.scheduled_at > {utcnow} AND coalesce((j.serialized_params ->> 'executions')::int, 0) > 1
                 THEN 'retried'
            WHEN j.scheduled_at > {utcnow} THEN 'scheduled'
            ELSE 'queued' END AS native_state,
       j.executions_count::int AS attempts, NULL::int AS max_attempts,
       j.scheduled_at AT TIME ZONE 'UTC' AS run_at, j.created_at AT TIME ZONE 'UTC' AS created_at,
       j.performed_at AT TIME ZONE 'UTC' AS started_at, j.finished_at AT TIME ZONE 'UTC' AS finished_at,
       j.locked_by_id::text AS holder, j.error, j.serialized_params::text AS payload,
       jsonb_build_object('job_class', j.job_class, 'priority', j.priority,
                          'active_job_id', j.active_job_id, 'concurrency_key', j.concurrency_key,
                          'cron_key', j.cron_key, 'batch_id', j.batch_id, 'labels', j.labels,
                          'error_event', j.error_event, 'locked_by_id', j.locked_by_id,
                          'locked_at', j.locked_at, 'advisory_locked', {job_locked},
                          'holder_liveness', CASE WHEN j.performed_at IS NOT NULL AND j.finished_at IS NULL
                                                  THEN ({liveness}) END) AS details
FROM {gj} j
WHERE j.id = %(id)s::text::uuid
