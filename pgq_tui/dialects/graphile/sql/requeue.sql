-- Rescue jobs whose lock expired: the transition Graphile Worker's pools make themselves every
-- 8-10 minutes (unlock, run_at at least now), for the chosen jobs only, and the lock the same dead
-- worker holds on the job's named queue. Guard, re-checked on the locked row: locked_at older than
-- 4 hours. Graphile has no admin function for one job (force_unlock_workers frees every lock of a
-- worker, fresh ones too).
WITH chosen AS (
    SELECT j.id, j.job_queue_id, j.locked_by FROM {jobs} j JOIN {tasks} t ON t.id = j.task_id
    WHERE j.locked_at < now() - interval '4 hours'
      AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
      AND (%(queue)s::text IS NULL OR t.identifier = %(queue)s::text)
    ORDER BY j.locked_at LIMIT %(batch)s
    FOR UPDATE OF j SKIP LOCKED
), unlocked_queues AS (
    UPDATE {queues} q SET locked_at = NULL, locked_by = NULL
    FROM chosen c
    WHERE q.id = c.job_queue_id AND q.locked_by = c.locked_by AND q.locked_at < now() - interval '4 hours'
)
UPDATE {jobs} j
SET locked_at = NULL, locked_by = NULL, run_at = greatest(j.run_at, now())
FROM chosen
WHERE j.id = chosen.id AND j.locked_at < now() - interval '4 hours'
RETURNING j.id
