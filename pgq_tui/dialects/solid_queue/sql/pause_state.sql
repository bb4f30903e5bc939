-- The paused queues, as Solid Queue's workers read them (QueueSelector#paused_queues:
-- Pause.all.pluck(:queue_name)); created_at is Rails' UTC timestamp without time zone.
SELECT p.queue_name AS queue, p.created_at AT TIME ZONE 'UTC' AS paused_at
FROM {pauses} p
