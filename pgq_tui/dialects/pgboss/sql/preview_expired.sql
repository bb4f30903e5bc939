-- Active jobs past their expiration (started_on + expire_in) among the chosen ones. pg-boss cannot
-- tell whether a worker still runs them, so none is reported alive.
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {job} j
WHERE j.state = 'active' AND j.started_on + j.expire_in < now()
  AND (%(ids)s::uuid[] IS NULL OR j.id = ANY(%(ids)s::uuid[]))
  AND (%(queue)s::text IS NULL OR j.name = %(queue)s::text)
