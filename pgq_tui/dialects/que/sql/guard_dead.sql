-- The guard of a retry: expired jobs (expired_at set), and errored ones (error_count > 0, not
-- finished) only when the operator names them; never one a Que lock holds (locks.sql), which a
-- worker is running.
(j.expired_at IS NOT NULL
 OR (j.error_count > 0 AND j.finished_at IS NULL AND %(ids)s::bigint[] IS NOT NULL))
AND NOT EXISTS (SELECT 1 FROM {locks} h WHERE h.id = j.id)
