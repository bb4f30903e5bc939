-- River's QueuePause (riverdriver QueuePause, then Client.notifyQueuePauseOrResume), for one queue:
-- paused_at and updated_at = now() where it was not paused, and in the same transaction the control
-- notification River's producers listen to on `<schema>.river_control`, JSON object with action "pause" and
-- queue (producer.go controlEventPayload). A producer whose notifier missed it sees
-- paused_at at its next queue-settings poll. Guard: the queue has a river_queue row (River's own
-- QueuePause returns ErrNotFound otherwise) and is not paused yet.
WITH paused AS (
    UPDATE {queues} q
    SET paused_at = now(), updated_at = now()
    WHERE q.name = %(queue)s AND q.paused_at IS NULL
    RETURNING q.name
), notified AS MATERIALIZED (
    SELECT p.name, pg_notify({control_channel}, json_build_object('action', 'pause', 'queue', p.name)::text)
    FROM paused p
)
SELECT n.name AS queue FROM notified n
