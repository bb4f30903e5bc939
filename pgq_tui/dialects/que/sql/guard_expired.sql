-- The guard of a discard: expired jobs (expired_at set), never one a Que lock holds (locks.sql).
j.expired_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM {locks} h WHERE h.id = j.id)
