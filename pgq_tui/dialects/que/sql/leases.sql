-- Running and stuck jobs, stuck first, at most %(rows)s of each (each list capped on its own):
-- every Que lock (locks.sql) on a job not finished and not expired. The holder is the locker's
-- que_lockers row (ruby_hostname, ruby_pid) and its backend pid; alive while it is registered and
-- its backend not idle past que_stuck_after, unknown otherwise (the backend is there; whether its
-- Ruby process is, the database cannot tell). Que records no start time (a lock has none);
-- expires_at is when an idle locker's backend passes que_stuck_after.
WITH leases AS (
    SELECT j.id, j.queue::text AS queue,
           CASE WHEN h.registered THEN h.ruby_hostname || ' ruby pid ' || h.ruby_pid::text
                ELSE 'Que Locker (no que_lockers row)' END || ' (backend ' || h.pid::text || ')' AS holder,
           CASE WHEN h.stuck THEN 'unknown' ELSE 'alive' END AS liveness,
           h.pid AS holder_pid, j.error_count::int AS attempts, NULL::int AS max_attempts,
           NULL::timestamptz AS started_at,
           CASE WHEN h.registered AND h.backend_state = 'idle'
                THEN h.state_change + make_interval(secs => {stuck_after_s}::float8) END AS expires_at,
           CASE WHEN h.registered AND h.backend_state = 'idle'
                THEN extract(epoch FROM h.state_change + make_interval(secs => {stuck_after_s}::float8) - now())
           END::float8 AS seconds_left,
           h.stuck, {payload} AS payload_preview
    FROM {locks} h JOIN {jobs} j ON j.id = h.id
    WHERE j.finished_at IS NULL AND j.expired_at IS NULL
)
(SELECT * FROM leases WHERE stuck IS TRUE ORDER BY id LIMIT %(rows)s)
UNION ALL
(SELECT * FROM leases WHERE stuck IS NOT TRUE ORDER BY id LIMIT %(rows)s)
ORDER BY stuck DESC, id
