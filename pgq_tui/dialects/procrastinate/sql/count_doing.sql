-- Running and stuck (procrastinate's "stalled") jobs per queue: doing, and stalled when the worker
-- row is gone (worker_id NULL: pruned) or its heartbeat is older than {stalled_after_s} seconds.
-- Running: the live workers (idx_procrastinate_workers_last_heartbeat), then their jobs through
-- idx_procrastinate_jobs_worker_not_null (worker_id) WHERE worker_id IS NOT NULL AND status = 'doing';
-- stuck: the silent workers' jobs the same way, plus the doing jobs whose worker row was pruned
-- (worker_id NULL) through the index pgq-top advises, (queue_name, id) WHERE status = 'doing' AND
-- worker_id IS NULL, index-only (procrastinate has none: its doing-jobs index holds the live ones too,
-- so finding the workerless among them costs a heap read per doing job). Each state is read up to
-- %(cap1)s rows over all queues together: exact while the total stays below the cap.
WITH running AS MATERIALIZED (
    SELECT j.queue_name
    FROM {workers} w
    CROSS JOIN LATERAL (SELECT j.queue_name FROM {jobs} j
                        WHERE j.worker_id = w.id AND j.worker_id IS NOT NULL AND j.status = 'doing'
                        LIMIT %(cap1)s) j
    WHERE w.last_heartbeat >= now() - make_interval(secs => {stalled_after_s})
    LIMIT %(cap1)s
), stuck AS MATERIALIZED (
    SELECT s.queue_name FROM (
        (SELECT j.queue_name
         FROM {workers} w
         CROSS JOIN LATERAL (SELECT j.queue_name FROM {jobs} j
                             WHERE j.worker_id = w.id AND j.worker_id IS NOT NULL AND j.status = 'doing'
                             LIMIT %(cap1)s) j
         WHERE w.last_heartbeat < now() - make_interval(secs => {stalled_after_s})
         LIMIT %(cap1)s)
        UNION ALL
        (SELECT j.queue_name FROM {jobs} j WHERE j.status = 'doing' AND j.worker_id IS NULL
         LIMIT %(cap1)s)
    ) s
    LIMIT %(cap1)s
)
SELECT r.queue_name::text AS queue, count(*) AS running, NULL::bigint AS stuck FROM running r GROUP BY 1
UNION ALL
SELECT s.queue_name::text, NULL, count(*) FROM stuck s GROUP BY 1
