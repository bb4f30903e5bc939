-- The guard of a Lifeline rescue: stuck by Lifeline's rule, executing with attempted_at older than
-- {rescue_after_s} s (UTC). Oban does not record whether its node still runs them.
j.state = 'executing'
AND (j.attempted_at IS NULL
     OR j.attempted_at < (now() AT TIME ZONE 'UTC') - make_interval(secs => {rescue_after_s}))
