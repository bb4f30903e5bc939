-- Doing jobs, stalled first, at most %(rows)s, through procrastinate_jobs_id_lock_idx_v1. Liveness is
-- procrastinate's own: its worker's heartbeat (procrastinate_workers.last_heartbeat, every 10 s by
-- default) is recent (alive), stale beyond {stalled_after_s} s or the worker row pruned (gone).
-- started_at is the job's last `started` event.
SELECT d.id, d.queue, d.holder,
       CASE WHEN d.stuck THEN 'gone' ELSE 'alive' END AS liveness, NULL::int AS holder_pid,
       d.attempts, NULL::int AS max_attempts,
       (SELECT max(e.at) FROM {events} e WHERE e.job_id = d.id AND e.type = 'started') AS started_at,
       d.expires_at, extract(epoch FROM d.expires_at - now())::float8 AS seconds_left, d.stuck,
       d.payload_preview
FROM (
    SELECT j.id, j.queue_name::text AS queue,
           CASE WHEN j.worker_id IS NOT NULL THEN 'worker ' || j.worker_id END AS holder,
           j.attempts, w.last_heartbeat + make_interval(secs => {stalled_after_s}) AS expires_at,
           w.id IS NULL OR w.last_heartbeat < now() - make_interval(secs => {stalled_after_s}) AS stuck,
           CASE WHEN pg_column_size(j.args) <= 65536 THEN left(j.task_name || ' ' || j.args::text, 200) END
               AS payload_preview
    FROM {jobs} j
    LEFT JOIN {workers} w ON w.id = j.worker_id
    WHERE j.status = 'doing'
    ORDER BY stuck DESC, expires_at NULLS FIRST, j.id
    LIMIT %(rows)s
) d
