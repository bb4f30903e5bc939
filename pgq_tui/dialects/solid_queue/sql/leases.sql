-- Claimed jobs, stuck first, at most %(rows)s of each list (stuck, and the others), with the
-- claiming process (kind, name, OS pid and host from solid_queue_processes). Alive: its heartbeat
-- is younger than {alive_threshold_s} s; gone: older, or the process row is gone. expires_at: when
-- that heartbeat turns the claim stuck. attempts: ActiveJob's `executions` in the job's serialized
-- arguments.
WITH leases AS (
    SELECT r.id, r.queue, r.holder,
           CASE WHEN r.stuck THEN 'gone' ELSE 'alive' END AS liveness, NULL::int AS holder_pid,
           r.attempts, NULL::int AS max_attempts, r.started_at, r.expires_at,
           extract(epoch FROM r.expires_at - now())::float8 AS seconds_left, r.stuck, r.payload_preview
    FROM (
        SELECT j.id, j.queue_name::text AS queue,
               CASE WHEN p.id IS NOT NULL
                    THEN p.kind || ' ' || p.name || ' pid ' || p.pid || coalesce(' on ' || p.hostname, '')
                    ELSE 'process ' || coalesce(c.process_id::text, '?') || ' (gone)' END AS holder,
               CASE WHEN left(j.arguments, 1) = '{{' THEN (j.arguments::jsonb ->> 'executions')::int END AS attempts,
               c.created_at AT TIME ZONE 'UTC' AS started_at,
               (p.last_heartbeat_at AT TIME ZONE 'UTC') + make_interval(secs => {alive_threshold_s}) AS expires_at,
               p.id IS NULL OR p.last_heartbeat_at <= (now() AT TIME ZONE 'UTC')
                                                      - make_interval(secs => {alive_threshold_s}) AS stuck,
               CASE WHEN length(j.arguments) <= 65536 THEN left(j.class_name || ' ' || j.arguments, 200) END
                   AS payload_preview
        FROM {claimed} c
        CROSS JOIN LATERAL (SELECT j.id, j.queue_name, j.class_name, j.arguments FROM {jobs} j
                            WHERE j.id = c.job_id LIMIT 1) j
        LEFT JOIN {processes} p ON p.id = c.process_id
    ) r
)
(SELECT * FROM leases WHERE stuck IS TRUE ORDER BY expires_at NULLS FIRST, id LIMIT %(rows)s)
UNION ALL
(SELECT * FROM leases WHERE stuck IS NOT TRUE ORDER BY expires_at NULLS FIRST, id LIMIT %(rows)s)
ORDER BY stuck DESC, expires_at NULLS FIRST, id
