-- The guard of a JobRescuer pass: stuck by its rule, running with attempted_at older than
-- {rescue_after_s} s. River records no heartbeat: whether a worker still runs one is unknown.
j.state = 'running'
AND (j.attempted_at IS NULL OR j.attempted_at < now() - make_interval(secs => {rescue_after_s}))
