-- Solid Queue's Queue#pause: Pause.create_or_find_by!(queue_name:), a row in solid_queue_pauses
-- (created_at in UTC, as Rails writes it). Its unique index on queue_name is the guard: a queue
-- already paused keeps its row and nothing is returned. Workers leave the queue out of their next
-- poll (QueueSelector: eligible queues minus paused ones).
INSERT INTO {pauses} (queue_name, created_at)
VALUES (%(queue)s, now() AT TIME ZONE 'UTC')
ON CONFLICT (queue_name) DO NOTHING
RETURNING queue_name AS queue
