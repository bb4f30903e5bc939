-- The ids of the chosen dead jobs (unlocked, attempts >= max_attempts), at most %(batch)s, locked
-- first with the guard, so nothing changes them between the check and the admin function's call
-- (retry.sql, discard.sql); the function re-checks that they are not locked by a worker.
ARRAY(SELECT j.id FROM {jobs} j JOIN {tasks} t ON t.id = j.task_id
      WHERE j.locked_at IS NULL AND j.attempts >= j.max_attempts
        AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
        AND (%(queue)s::text IS NULL OR t.identifier = %(queue)s::text)
      ORDER BY j.id LIMIT %(batch)s
      FOR UPDATE OF j SKIP LOCKED)
