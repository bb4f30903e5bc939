-- The ids of every job a Que lock holds (locks.sql), as one array: a job among them is running or
-- stuck, never ready, scheduled or errored.
(SELECT coalesce(array_agg(h.id), ARRAY[]::bigint[]) FROM {locks} h)
