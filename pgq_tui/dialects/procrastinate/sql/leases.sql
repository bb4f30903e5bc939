-- Doing jobs, stalled first, at most %(rows)s stalled and %(rows)s others, read like
-- count_doing.sql: the live and the silent workers' jobs through
-- idx_procrastinate_jobs_worker_not_null, the workerless ones through the advised (queue_name, id)
-- WHERE status = 'doing' AND worker_id IS NULL (their ids from the index, then only those rows).
-- Liveness is procrastinate's own: its worker's heartbeat (procrastinate_workers.last_heartbeat,
-- every 10 s by default) is recent (alive), or stale beyond {stalled_after_s} s or the worker row
-- pruned (gone). started_at is the job's last `started` event.
WITH doing AS (
    (SELECT j.id, j.queue_name, j.worker_id, j.attempts, j.task_name, j.args, NULL::timestamptz AS heartbeat
     FROM (SELECT g.id FROM {jobs} g WHERE g.status = 'doing' AND g.worker_id IS NULL
           ORDER BY g.queue_name, g.id LIMIT %(rows)s) g
     CROSS JOIN LATERAL (SELECT * FROM {jobs} j WHERE j.id = g.id AND j.status = 'doing'
                         AND j.worker_id IS NULL LIMIT 1) j)
    UNION ALL
    -- the stale workers' jobs and the live workers' (`s`: each range of last_heartbeat), each at most
    -- %(rows)s: a list capped on its own, never filled by the other
    (SELECT j.id, j.queue_name, j.worker_id, j.attempts, j.task_name, j.args, j.last_heartbeat
     FROM (VALUES ('-infinity'::timestamptz, now() - make_interval(secs => {stalled_after_s})),
                  (now() - make_interval(secs => {stalled_after_s}), 'infinity'::timestamptz)) s(lo, hi)
     CROSS JOIN LATERAL (
         SELECT j.*, w.last_heartbeat
         FROM {workers} w
         CROSS JOIN LATERAL (SELECT * FROM {jobs} j
                             WHERE j.worker_id = w.id AND j.worker_id IS NOT NULL AND j.status = 'doing'
                             LIMIT %(rows)s) j
         WHERE w.last_heartbeat >= s.lo AND w.last_heartbeat < s.hi
         ORDER BY w.last_heartbeat LIMIT %(rows)s) j)
), marked AS (
    SELECT d.*, d.heartbeat + make_interval(secs => {stalled_after_s}) AS expires_at,
           d.heartbeat IS NULL OR d.heartbeat < now() - make_interval(secs => {stalled_after_s}) AS stuck
    FROM doing d
), ranked AS (
    (SELECT * FROM marked WHERE stuck ORDER BY expires_at NULLS FIRST, id LIMIT %(rows)s)
    UNION ALL
    (SELECT * FROM marked WHERE NOT stuck ORDER BY expires_at NULLS FIRST, id LIMIT %(rows)s)
)
SELECT r.id, r.queue_name::text AS queue,
       CASE WHEN r.worker_id IS NOT NULL THEN 'worker ' || r.worker_id END AS holder,
       CASE WHEN r.stuck THEN 'gone' ELSE 'alive' END AS liveness, NULL::int AS holder_pid,
       r.attempts, NULL::int AS max_attempts,
       (SELECT max(e.at) FROM {events} e WHERE e.job_id = r.id AND e.type = 'started') AS started_at,
       r.expires_at, extract(epoch FROM r.expires_at - now())::float8 AS seconds_left, r.stuck,
       CASE WHEN pg_column_size(r.args) <= 65536 THEN left(r.task_name || ' ' || r.args::text, 200) END
           AS payload_preview
FROM ranked r
ORDER BY r.stuck DESC, r.expires_at NULLS FIRST, r.id
