-- Dead jobs (unlocked, attempts >= max_attempts) among the chosen ones.
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {jobs} j JOIN {tasks} t ON t.id = j.task_id
WHERE j.locked_at IS NULL AND j.attempts >= j.max_attempts
  AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
  AND (%(queue)s::text IS NULL OR t.identifier = %(queue)s::text)
