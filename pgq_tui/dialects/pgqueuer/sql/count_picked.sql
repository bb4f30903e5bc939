-- Running and stuck jobs per entrypoint: picked, and stuck when its heartbeat is older than the
-- workers' heartbeat timeout ({heartbeat_timeout_s} s), after which pgqueuer's own dequeue re-picks
-- it. Each is one range of pgqueuer's own index pgqueuer_picked_heartbeat_idx (heartbeat) WHERE
-- status = 'picked', read up to %(cap1)s rows over all entrypoints together (the index has no
-- entrypoint column): exact while the total stays below the cap.
SELECT r.entrypoint AS queue, count(*) AS running, NULL::bigint AS stuck
FROM (SELECT j.entrypoint FROM {jobs} j
      WHERE j.status = 'picked' AND j.heartbeat >= now() - make_interval(secs => {heartbeat_timeout_s})
      ORDER BY j.heartbeat DESC LIMIT %(cap1)s) r
GROUP BY r.entrypoint
UNION ALL
SELECT s.entrypoint, NULL, count(*)
FROM (SELECT j.entrypoint FROM {jobs} j
      WHERE j.status = 'picked' AND j.heartbeat < now() - make_interval(secs => {heartbeat_timeout_s})
      ORDER BY j.heartbeat LIMIT %(cap1)s) s
GROUP BY s.entrypoint
