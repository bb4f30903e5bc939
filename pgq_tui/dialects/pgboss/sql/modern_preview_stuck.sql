-- pg-boss 11 and 12: active jobs past their timeout (or, from schema 30, their heartbeat) among the
-- chosen ones. A job whose heartbeat is still fresh (a live worker refreshes it) is not eligible: it
-- is not stuck.
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {job} j
WHERE j.state = 'active'
  AND (j.started_on + j.expire_seconds * interval '1 second' < now()
       OR coalesce(j.heartbeat_on + j.heartbeat_seconds * interval '1 second' < now(), false)  -- [30+]
       )
  AND (%(ids)s::uuid[] IS NULL OR j.id = ANY(%(ids)s::uuid[]))
  AND (%(queue)s::text IS NULL OR j.name = %(queue)s::text)
