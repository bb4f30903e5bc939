-- Picked jobs, stalest heartbeat first, at most %(rows)s stuck and %(rows)s live (each list capped on
-- its own: a range of pgqueuer_picked_heartbeat_idx each).
-- The holder is the QueueManager's uuid; liveness is pgqueuer's own signal, the job's heartbeat
-- (refreshed about every half timeout by the worker running it): fresh is alive, older than
-- {heartbeat_timeout_s} s is gone. started_at: `updated`, set when the job was picked.
SELECT j.id, j.entrypoint AS queue, j.queue_manager_id::text AS holder,
       CASE WHEN j.heartbeat < now() - make_interval(secs => {heartbeat_timeout_s}) THEN 'gone' ELSE 'alive' END
           AS liveness,
       NULL::int AS holder_pid, j.attempts, NULL::int AS max_attempts, j.updated AS started_at,
       j.heartbeat + make_interval(secs => {heartbeat_timeout_s}) AS expires_at,
       extract(epoch FROM j.heartbeat + make_interval(secs => {heartbeat_timeout_s}) - now())::float8
           AS seconds_left,
       j.heartbeat < now() - make_interval(secs => {heartbeat_timeout_s}) AS stuck,
       CASE WHEN octet_length(j.payload) <= 65536 THEN left(convert_from(j.payload, 'UTF8'), 200) END
           AS payload_preview
FROM ((SELECT * FROM {jobs} WHERE status = 'picked'
        AND heartbeat < now() - make_interval(secs => {heartbeat_timeout_s})
        ORDER BY heartbeat LIMIT %(rows)s)
      UNION ALL
      (SELECT * FROM {jobs} WHERE status = 'picked'
        AND heartbeat >= now() - make_interval(secs => {heartbeat_timeout_s})
        ORDER BY heartbeat LIMIT %(rows)s)) j
ORDER BY j.heartbeat, j.id
