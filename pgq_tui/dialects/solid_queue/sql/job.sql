-- One job in full: its state is the execution table that holds it (Solid Queue's own model).
SELECT j.id, j.queue_name::text AS queue,
       CASE WHEN j.finished_at IS NOT NULL THEN 'done'
            WHEN r.id IS NOT NULL THEN 'ready'
            WHEN s.id IS NOT NULL THEN 'scheduled'
            WHEN c.id IS NOT NULL THEN
                 CASE WHEN p.last_heartbeat_at > (now() AT TIME ZONE 'UTC') - make_interval(secs => {alive_threshold_s})
                      THEN 'running' ELSE 'stuck' END
            WHEN f.id IS NOT NULL THEN 'dead'
            WHEN b.id IS NOT NULL THEN 'blocked'
            ELSE 'none' END AS state,
       CASE WHEN j.finished_at IS NOT NULL THEN 'finished' WHEN r.id IS NOT NULL THEN 'ready'
            WHEN s.id IS NOT NULL THEN 'scheduled' WHEN c.id IS NOT NULL THEN 'claimed'
            WHEN f.id IS NOT NULL THEN 'failed' WHEN b.id IS NOT NULL THEN 'blocked' END AS native_state,
       CASE WHEN left(j.arguments, 1) = '{{' THEN (j.arguments::jsonb ->> 'executions')::int END AS attempts, NULL::int AS max_attempts,
       j.scheduled_at AT TIME ZONE 'UTC' AS run_at, j.created_at AT TIME ZONE 'UTC' AS created_at,
       c.created_at AT TIME ZONE 'UTC' AS started_at, j.finished_at AT TIME ZONE 'UTC' AS finished_at,
       CASE WHEN p.id IS NOT NULL
            THEN p.kind || ' ' || p.name || ' pid ' || p.pid || coalesce(' on ' || p.hostname, '') END AS holder,
       f.error, j.arguments AS payload,
       jsonb_build_object('class_name', j.class_name, 'priority', j.priority, 'active_job_id', j.active_job_id,
                          'concurrency_key', j.concurrency_key, 'process_id', c.process_id,
                          'process_last_heartbeat_at', p.last_heartbeat_at,
                          'alive_threshold', make_interval(secs => {alive_threshold_s})::text) AS details
FROM {jobs} j
LEFT JOIN {ready} r ON r.job_id = j.id
LEFT JOIN {scheduled} s ON s.job_id = j.id
LEFT JOIN {claimed} c ON c.job_id = j.id
LEFT JOIN {processes} p ON p.id = c.process_id
LEFT JOIN {failed} f ON f.job_id = j.id
LEFT JOIN {blocked} b ON b.job_id = j.id
WHERE j.id = %(id)s::bigint
