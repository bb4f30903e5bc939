-- Dead-lettered workflows (MAX_RECOVERY_ATTEMPTS_EXCEEDED), newest first, at most %(rows)s, through
-- DBOS's idx_workflow_status_failed (status, created_at). DBOS 3.4 writes a workflow's error to
-- dbos.workflow_output (a dead-lettered one has none: it never finished). recovery_attempts counts
-- every dispatch (DBOS adds one per claim and per recovery); the limit is the workflow function's
-- max_recovery_attempts, in the application's code, so max_attempts is NULL.
SELECT j.workflow_uuid AS id, {queue}::text AS queue, j.recovery_attempts::int AS attempts,
       NULL::int AS max_attempts, to_timestamp(j.completed_at / 1000.0) AS finished_at,
       coalesce((SELECT o.error FROM {wo} o WHERE o.workflow_uuid = j.workflow_uuid), j.error) AS error,
       {payload} AS payload_preview
FROM (SELECT * FROM {ws} j WHERE j.status = 'MAX_RECOVERY_ATTEMPTS_EXCEEDED'
      ORDER BY j.created_at DESC LIMIT %(rows)s) j
ORDER BY j.created_at DESC
