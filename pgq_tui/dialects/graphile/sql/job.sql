-- One job in full. Graphile deletes finished jobs, so a done job has no row.
SELECT j.id, t.identifier AS queue,
       CASE WHEN j.locked_at IS NOT NULL AND j.locked_at < now() - interval '4 hours' THEN 'stuck'
            WHEN j.locked_at IS NOT NULL THEN 'running'
            WHEN j.attempts >= j.max_attempts THEN 'dead'
            WHEN j.run_at <= now() THEN 'ready'
            ELSE 'scheduled' END AS state,
       CASE WHEN j.locked_at IS NOT NULL THEN 'locked'
            WHEN j.attempts >= j.max_attempts THEN 'permanently failed'
            WHEN j.attempts > 0 THEN 'waiting to retry'
            ELSE 'waiting' END AS native_state,
       j.attempts::int AS attempts, j.max_attempts::int AS max_attempts, j.run_at, j.created_at,
       j.locked_at AS started_at, NULL::timestamptz AS finished_at, j.locked_by AS holder,
       j.last_error AS error, j.payload::text AS payload,
       jsonb_build_object('task_identifier', t.identifier, 'queue_name', q.queue_name,
                          'queue_locked_by', q.locked_by, 'priority', j.priority, 'key', j.key,
                          'revision', j.revision, 'flags', j.flags, 'updated_at', j.updated_at)
           AS details
FROM {jobs} j
JOIN {tasks} t ON t.id = j.task_id
LEFT JOIN {queues} q ON q.id = j.job_queue_id
WHERE j.id = %(id)s::bigint
