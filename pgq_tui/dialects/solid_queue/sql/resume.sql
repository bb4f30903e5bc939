-- Solid Queue's Queue#resume: Pause.where(queue_name:).delete_all. Guard: a pause row names it.
DELETE FROM {pauses} p
WHERE p.queue_name = %(queue)s
RETURNING p.queue_name AS queue
