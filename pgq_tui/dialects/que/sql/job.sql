-- One job in full: its state in Que's words (que_determine_job_state, plus a Que lock: running) and
-- pgq-top's, Que's own fields in `details`.
SELECT j.id, j.queue::text AS queue,
       CASE WHEN j.expired_at IS NOT NULL THEN 'dead'
            WHEN j.finished_at IS NOT NULL THEN 'done'
            WHEN h.id IS NOT NULL THEN CASE WHEN h.stuck THEN 'stuck' ELSE 'running' END
            WHEN j.error_count > 0 THEN 'errored'
            WHEN j.run_at > now() THEN 'scheduled'
            ELSE 'ready' END AS state,
       CASE WHEN j.expired_at IS NOT NULL THEN 'expired'
            WHEN j.finished_at IS NOT NULL THEN 'finished'
            WHEN h.id IS NOT NULL THEN 'locked'
            WHEN j.error_count > 0 THEN 'errored'
            WHEN j.run_at > now() THEN 'scheduled'
            ELSE 'ready' END AS native_state,
       j.error_count::int AS attempts, NULL::int AS max_attempts, j.run_at, NULL::timestamptz AS created_at,
       NULL::timestamptz AS started_at, coalesce(j.expired_at, j.finished_at) AS finished_at,
       CASE WHEN h.id IS NOT NULL THEN coalesce(h.ruby_hostname || ' ruby pid ' || h.ruby_pid::text,
                                                'Que Locker (no que_lockers row)')
                                       || ' (backend ' || h.pid::text || ')' END AS holder,
       j.last_error_message AS error,
       jsonb_build_object('args', j.args, 'kwargs', j.kwargs)::text AS payload,
       jsonb_build_object('job_class', j.job_class, 'priority', j.priority, 'data', j.data,
                          'job_schema_version', j.job_schema_version, 'error_count', j.error_count,
                          'last_error_backtrace', j.last_error_backtrace, 'finished_at', j.finished_at,
                          'expired_at', j.expired_at, 'lock_backend_pid', h.pid,
                          'locker_registered', h.registered) AS details
FROM {jobs} j LEFT JOIN {locks} h ON h.id = j.id
WHERE j.id = %(id)s::bigint
