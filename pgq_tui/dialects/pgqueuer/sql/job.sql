-- One job in full. pgqueuer deletes finished jobs (logging them), so only queued, picked and failed
-- jobs have a row; the error is the last logged exception.
SELECT j.id, j.entrypoint AS queue,
       CASE j.status::text
            WHEN 'queued' THEN CASE WHEN j.execute_after < now() THEN 'ready' ELSE 'scheduled' END
            WHEN 'picked' THEN CASE WHEN j.heartbeat < now() - make_interval(secs => {heartbeat_timeout_s})
                                    THEN 'stuck' ELSE 'running' END
            WHEN 'failed' THEN 'dead'
            ELSE j.status::text END AS state,
       j.status::text AS native_state, j.attempts, NULL::int AS max_attempts, j.execute_after AS run_at,
       j.created AS created_at, CASE WHEN j.status = 'picked' THEN j.updated END AS started_at,
       CASE WHEN j.status = 'failed' THEN j.updated END AS finished_at,
       j.queue_manager_id::text AS holder,
       (SELECT left(coalesce(l.traceback->>'exception_type' || ': ' || (l.traceback->>'exception_message'),
                             l.traceback::text), 2000)
        FROM {log} l WHERE l.job_id = j.id AND l.traceback IS NOT NULL
        ORDER BY l.created DESC LIMIT 1) AS error,
       CASE WHEN octet_length(j.payload) <= 65536 THEN convert_from(j.payload, 'UTF8') END AS payload,
       jsonb_build_object('priority', j.priority, 'heartbeat', j.heartbeat, 'updated', j.updated,
                          'dedupe_key', j.dedupe_key, 'headers', j.headers) AS details
FROM {jobs} j
WHERE j.id = %(id)s::bigint
