-- Stuck jobs among the chosen ones by Lifeline's rule: executing, attempted_at older than
-- {rescue_after_s} s (UTC). Oban does not record whether its node still runs them.
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {jobs} j
WHERE j.state = 'executing'
  AND (j.attempted_at IS NULL
       OR j.attempted_at < (now() AT TIME ZONE 'UTC') - make_interval(secs => {rescue_after_s}))
  AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
  AND (%(queue)s::text IS NULL OR j.queue = %(queue)s::text)
