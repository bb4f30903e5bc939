-- Hand stale picked jobs back to the queue with the transition pgqueuer's own retry makes (queued,
-- execute_after now, attempts + 1, queue_manager_id cleared) and log it as pgqueuer does. pgqueuer's
-- workers would also re-pick such a job themselves, but only a worker serving its entrypoint.
-- Guard, re-checked on the locked row: picked, heartbeat older than {heartbeat_timeout_s} s.
WITH chosen AS (
    SELECT j.id FROM {jobs} j
    WHERE j.status = 'picked' AND j.heartbeat < now() - make_interval(secs => {heartbeat_timeout_s})
      AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
      AND (%(queue)s::text IS NULL OR j.entrypoint = %(queue)s::text)
    ORDER BY j.heartbeat LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
), requeued AS (
    UPDATE {jobs} j
    SET status = 'queued', execute_after = now(), attempts = j.attempts + 1, updated = now(),
        queue_manager_id = NULL
    FROM chosen
    WHERE j.id = chosen.id AND j.status = 'picked'
      AND j.heartbeat < now() - make_interval(secs => {heartbeat_timeout_s})
    RETURNING j.id, j.entrypoint, j.priority
), logged AS (
    INSERT INTO {log} (job_id, status, entrypoint, priority)
    SELECT id, 'queued', entrypoint, priority FROM requeued
)
SELECT id FROM requeued
