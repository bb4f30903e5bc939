-- Discard dead jobs with Graphile Worker's own admin function complete_jobs(), which deletes them.
-- The chosen rows are locked first with the guard (unlocked, attempts >= max_attempts); the function
-- re-checks that they are not locked by a worker.
SELECT r.id FROM {complete_jobs}(
    ARRAY(SELECT j.id FROM {jobs} j JOIN {tasks} t ON t.id = j.task_id
          WHERE j.locked_at IS NULL AND j.attempts >= j.max_attempts
            AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
            AND (%(queue)s::text IS NULL OR t.identifier = %(queue)s::text)
          ORDER BY j.id LIMIT %(batch)s
          FOR UPDATE OF j SKIP LOCKED)) r
