-- The guard of a requeue: picked jobs whose heartbeat is older than {heartbeat_timeout_s} s (none of
-- them is alive by pgqueuer's own rule).
j.status = 'picked' AND j.heartbeat < now() - make_interval(secs => {heartbeat_timeout_s})
