-- Running jobs held by a process (performed_at set, finished_at NULL, locked_by_id set), stuck
-- first, at most %(rows)s stuck and %(rows)s others (each list capped on its own): every held job
-- is judged through index_good_jobs_on_locked_by_id (its process's liveness is not in any index),
-- O(running jobs), then only the chosen rows are read whole. The holder is the locked_by_id process
-- (its hostname and pid from good_job_processes.state), holder_pid the backend holding the job's
-- advisory lock. good_job has no lease time: expires_at is NULL.
WITH held AS (
    SELECT j.id, ({stuck}) AS stuck, j.performed_at FROM {gj} j
    WHERE j.locked_by_id IS NOT NULL AND j.finished_at IS NULL AND j.performed_at IS NOT NULL
), picked AS MATERIALIZED (
    (SELECT h.id FROM held h WHERE h.stuck IS TRUE ORDER BY h.performed_at, h.id LIMIT %(rows)s)
    UNION ALL
    (SELECT h.id FROM held h WHERE h.stuck IS NOT TRUE ORDER BY h.performed_at, h.id LIMIT %(rows)s)
), running AS (
    SELECT j.*, ({stuck}) AS stuck, ({liveness}) AS liveness, {payload} AS payload_preview
    FROM {gj} j JOIN picked k ON k.id = j.id
)
SELECT r.id::text AS id, r.queue_name::text AS queue,
       coalesce(r.locked_by_id::text
                || coalesce((SELECT ' (' || (p.state ->> 'hostname') || ' pid ' || (p.state ->> 'pid') || ')'
                             FROM {gp} p WHERE p.id = r.locked_by_id), ' (no process row)'), NULL) AS holder,
       r.liveness::text AS liveness,
       (SELECT l.pid FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted AND r.liveness = 'alive'
          AND l.classid = substring((('x' || substr(md5({jobs_name} || '-' || r.id::text), 1, 16))::bit(64)::bigint)::bit(64) from 1 for 32)::bit(32)::int
          AND l.objid = substring((('x' || substr(md5({jobs_name} || '-' || r.id::text), 1, 16))::bit(64)::bigint)::bit(64) from 33 for 32)::bit(32)::int
        LIMIT 1) AS holder_pid,
       r.executions_count::int AS attempts, NULL::int AS max_attempts,
       r.performed_at AT TIME ZONE 'UTC' AS started_at,
       NULL::timestamptz AS expires_at, NULL::float8 AS seconds_left,
       r.stuck, r.payload_preview
FROM running r
ORDER BY r.stuck DESC, r.performed_at, r.id
