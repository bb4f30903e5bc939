-- Running and stuck jobs per entrypoint: picked, and stuck when its heartbeat is older than the
-- workers' heartbeat timeout ({heartbeat_timeout_s} s), after which pgqueuer's own dequeue re-picks
-- it. Read through pgqueuer's own index pgqueuer_picked_heartbeat_idx (heartbeat) WHERE status =
-- 'picked': O(picked jobs). Each count is reported up to %(cap1)s.
SELECT j.entrypoint AS queue,
       least(count(*) FILTER (WHERE j.heartbeat >= now() - make_interval(secs => {heartbeat_timeout_s})),
             %(cap1)s) AS running,
       least(count(*) FILTER (WHERE j.heartbeat < now() - make_interval(secs => {heartbeat_timeout_s})),
             %(cap1)s) AS stuck
FROM {jobs} j
WHERE j.status = 'picked'
GROUP BY j.entrypoint
