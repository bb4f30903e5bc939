-- The paused queues, as River's clients read them: river_queue.paused_at set (QueueGet/QueueList).
SELECT q.name AS queue, q.paused_at
FROM {queues} q
WHERE q.paused_at IS NOT NULL
