-- Stuck jobs among the chosen ones by the JobRescuer's rule: running, attempted_at older than
-- {rescue_after_s} s. River records no heartbeat: whether a worker still runs one is unknown.
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {jobs} j
WHERE j.state = 'running'
  AND (j.attempted_at IS NULL OR j.attempted_at < now() - make_interval(secs => {rescue_after_s}))
  AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
  AND (%(queue)s::text IS NULL OR j.queue = %(queue)s::text)
