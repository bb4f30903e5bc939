-- One workflow in full: its status in DBOS's words and pgq-top's, DBOS's own fields in `details`
-- (epoch-millisecond times shown as timestamps).
SELECT j.workflow_uuid AS id, {queue}::text AS queue,
       CASE j.status
            WHEN 'ENQUEUED' THEN 'ready'
            WHEN 'DELAYED' THEN 'scheduled'
            WHEN 'PENDING' THEN CASE WHEN ({stuck}) THEN 'stuck' ELSE 'running' END
            WHEN 'MAX_RECOVERY_ATTEMPTS_EXCEEDED' THEN 'dead'
            WHEN 'SUCCESS' THEN 'done'
            WHEN 'ERROR' THEN 'failed'
            WHEN 'CANCELLED' THEN 'cancelled'
            ELSE j.status END AS state,
       j.status AS native_state, j.recovery_attempts::int AS attempts, NULL::int AS max_attempts,
       to_timestamp(j.delay_until_epoch_ms / 1000.0) AS run_at, to_timestamp(j.created_at / 1000.0) AS created_at,
       to_timestamp(j.started_at_epoch_ms / 1000.0) AS started_at,
       to_timestamp(j.completed_at / 1000.0) AS finished_at,
       j.executor_id AS holder,
       coalesce((SELECT o.error FROM {wo} o WHERE o.workflow_uuid = j.workflow_uuid), j.error) AS error,
       coalesce((SELECT i.inputs FROM {wi} i WHERE i.workflow_uuid = j.workflow_uuid), j.inputs) AS payload,
       jsonb_build_object('name', j.name, 'class_name', j.class_name, 'config_name', j.config_name,
                          'queue_name', j.queue_name, 'priority', j.priority,
                          'deduplication_id', j.deduplication_id, 'executor_id', j.executor_id,
                          'application_version', j.application_version,
                          'application_name', j.application_name,
                          'executor_liveness', CASE WHEN j.status = 'PENDING' THEN ({liveness}) END,
                          'updated_at', to_timestamp(j.updated_at / 1000.0),
                          'workflow_timeout_ms', j.workflow_timeout_ms,
                          'workflow_deadline', to_timestamp(j.workflow_deadline_epoch_ms / 1000.0),
                          'parent_workflow_id', j.parent_workflow_id, 'forked_from', j.forked_from,
                          'authenticated_user', j.authenticated_user) AS details
FROM {ws} j
WHERE j.workflow_uuid = %(id)s::text
