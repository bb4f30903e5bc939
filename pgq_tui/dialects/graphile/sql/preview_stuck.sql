-- Locked jobs whose lock has expired (older than 4 hours), among the chosen ones. Liveness is
-- unknown for Graphile, so none is reported alive.
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {jobs} j JOIN {tasks} t ON t.id = j.task_id
WHERE j.locked_at < now() - interval '4 hours'
  AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
  AND (%(queue)s::text IS NULL OR t.identifier = %(queue)s::text)
