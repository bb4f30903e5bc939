-- Picked jobs whose heartbeat is older than {heartbeat_timeout_s} s, among the chosen ones (none of
-- them is alive by pgqueuer's own rule).
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {jobs} j
WHERE j.status = 'picked' AND j.heartbeat < now() - make_interval(secs => {heartbeat_timeout_s})
  AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
  AND (%(queue)s::text IS NULL OR j.entrypoint = %(queue)s::text)
