-- Active jobs past their timeout (started_on + expire_in before schema 25, + expire_seconds after) or,
-- from schema 30, past their heartbeat, among the chosen ones. pg-boss cannot tell whether a worker
-- still runs a job without a heartbeat, so none is reported alive; a job whose heartbeat is still
-- fresh (a live worker refreshes it) is not eligible: it is not stuck.
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {job} j
WHERE {stuck}
  AND (%(ids)s::uuid[] IS NULL OR j.id = ANY(%(ids)s::uuid[]))
  AND (%(queue)s::text IS NULL OR j.name = %(queue)s::text)
