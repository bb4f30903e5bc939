-- PENDING workflows, stuck first, at most %(rows)s stuck and %(rows)s others (each list capped on
-- its own), through DBOS's idx_workflow_status_pending (created_at) WHERE status = 'PENDING': every
-- PENDING workflow is judged (its executor's liveness is not in any index), O(running workflows).
-- The holder is the executor_id (and application_version) that claimed it; its liveness is
-- pgq-top's rule (liveness.sql), since DBOS keeps no heartbeat. With dbos_stuck_after set,
-- expires_at is updated_at plus that threshold; otherwise no time makes a workflow stuck, only its
-- executor's absence (expires_at NULL).
WITH pending AS (
    SELECT j.workflow_uuid, {queue} AS queue, j.executor_id, j.application_version, j.recovery_attempts,
           j.started_at_epoch_ms, j.created_at, j.updated_at, ({stuck}) AS stuck, ({liveness}) AS liveness,
           {payload} AS payload_preview
    FROM {ws} j WHERE j.status = 'PENDING'
), judged AS (
    SELECT p.*,
           CASE WHEN {stuck_after_ms}::bigint > 0
                THEN to_timestamp((p.updated_at + {stuck_after_ms}::bigint) / 1000.0) END AS expires_at
    FROM pending p
), timed AS (
    (SELECT * FROM judged WHERE stuck IS TRUE
     ORDER BY expires_at NULLS LAST, created_at, workflow_uuid LIMIT %(rows)s)
    UNION ALL
    (SELECT * FROM judged WHERE stuck IS NOT TRUE
     ORDER BY expires_at NULLS LAST, created_at, workflow_uuid LIMIT %(rows)s)
)
SELECT t.workflow_uuid AS id, t.queue::text AS queue,
       t.executor_id || coalesce(' (version ' || t.application_version || ')', '') AS holder,
       t.liveness::text AS liveness,
       (SELECT a.pid FROM pg_stat_activity a WHERE a.datname = current_database()
          AND a.application_name = t.executor_id ORDER BY a.backend_start LIMIT 1) AS holder_pid,
       t.recovery_attempts::int AS attempts, NULL::int AS max_attempts,
       to_timestamp(coalesce(t.started_at_epoch_ms, t.created_at) / 1000.0) AS started_at,
       t.expires_at, extract(epoch FROM t.expires_at - now())::float8 AS seconds_left,
       t.stuck, t.payload_preview
FROM timed t
ORDER BY t.stuck DESC, t.expires_at NULLS LAST, t.created_at, t.workflow_uuid
