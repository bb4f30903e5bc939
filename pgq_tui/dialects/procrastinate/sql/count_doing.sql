-- Running and stuck (procrastinate's "stalled") jobs per queue: doing, and stalled when the worker
-- row is gone (worker_id NULL: pruned) or its heartbeat is older than {stalled_after_s} seconds.
-- Read through procrastinate's own partial index procrastinate_jobs_id_lock_idx_v1 (id, lock)
-- WHERE status IN ('todo', 'doing'): O(active jobs). Each count is reported up to %(cap1)s.
SELECT j.queue_name::text AS queue,
       least(count(*) FILTER (WHERE w.last_heartbeat >= now() - make_interval(secs => {stalled_after_s})),
             %(cap1)s) AS running,
       least(count(*) FILTER (WHERE w.id IS NULL
                                 OR w.last_heartbeat < now() - make_interval(secs => {stalled_after_s})),
             %(cap1)s) AS stuck
FROM {jobs} j
LEFT JOIN {workers} w ON w.id = j.worker_id
WHERE j.status = 'doing'
GROUP BY j.queue_name
