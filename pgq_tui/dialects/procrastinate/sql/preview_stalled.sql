-- Stalled jobs among the chosen ones: doing, worker row gone or heartbeat older than
-- {stalled_after_s} s. None of them has a live worker by that rule.
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {jobs} j
LEFT JOIN {workers} w ON w.id = j.worker_id
WHERE j.status = 'doing'
  AND (w.id IS NULL OR w.last_heartbeat < now() - make_interval(secs => {stalled_after_s}))
  AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
  AND (%(queue)s::text IS NULL OR j.queue_name = %(queue)s::text)
