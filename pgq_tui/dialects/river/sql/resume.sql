-- River's QueueResume for one queue: paused_at cleared, updated_at = now(), and the control
-- notification (action "resume", queue) on `<schema>.river_control` (producers fetch at
-- once). Guard: the queue is paused.
WITH resumed AS (
    UPDATE {queues} q
    SET paused_at = NULL, updated_at = now()
    WHERE q.name = %(queue)s AND q.paused_at IS NOT NULL
    RETURNING q.name
), notified AS MATERIALIZED (
    SELECT r.name, pg_notify({control_channel}, json_build_object('action', 'resume', 'queue', r.name)::text)
    FROM resumed r
)
SELECT n.name AS queue FROM notified n
