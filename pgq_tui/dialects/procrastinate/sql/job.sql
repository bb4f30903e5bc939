-- One job in full, with its worker's heartbeat and its event history's times.
SELECT j.id, j.queue_name::text AS queue,
       CASE j.status::text
            WHEN 'todo' THEN CASE WHEN coalesce(j.scheduled_at <= now(), true) THEN 'ready' ELSE 'scheduled' END
            WHEN 'doing' THEN CASE WHEN w.id IS NULL
                                     OR w.last_heartbeat < now() - make_interval(secs => {stalled_after_s})
                                   THEN 'stuck' ELSE 'running' END
            WHEN 'failed' THEN 'dead'
            WHEN 'succeeded' THEN 'done'
            ELSE j.status::text END AS state,
       j.status::text AS native_state, j.attempts, NULL::int AS max_attempts, j.scheduled_at AS run_at,
       (SELECT min(e.at) FROM {events} e WHERE e.job_id = j.id AND e.type = 'deferred') AS created_at,
       (SELECT max(e.at) FROM {events} e WHERE e.job_id = j.id AND e.type = 'started') AS started_at,
       (SELECT max(e.at) FROM {events} e WHERE e.job_id = j.id
          AND e.type IN ('succeeded', 'failed', 'cancelled', 'aborted')) AS finished_at,
       CASE WHEN j.worker_id IS NOT NULL THEN 'worker ' || j.worker_id END AS holder,
       NULL::text AS error, j.args::text AS payload,
       jsonb_build_object('task_name', j.task_name, 'priority', j.priority, 'lock', j.lock,
                          'queueing_lock', j.queueing_lock, 'abort_requested', j.abort_requested,
                          'worker_id', j.worker_id, 'worker_last_heartbeat', w.last_heartbeat)
           AS details
FROM {jobs} j
LEFT JOIN {workers} w ON w.id = j.worker_id
WHERE j.id = %(id)s::bigint
