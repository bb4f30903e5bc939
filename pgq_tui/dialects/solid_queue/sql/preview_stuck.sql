-- Stuck claims among the chosen jobs: the claiming process's heartbeat is {alive_threshold_s} s old
-- or more, or its row is gone. None of them has a live process by Solid Queue's rule.
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {claimed} c
JOIN {jobs} j ON j.id = c.job_id
LEFT JOIN {processes} p ON p.id = c.process_id
WHERE (p.id IS NULL OR p.last_heartbeat_at <= (now() AT TIME ZONE 'UTC') - make_interval(secs => {alive_threshold_s}))
  AND (%(ids)s::bigint[] IS NULL OR c.job_id = ANY(%(ids)s::bigint[]))
  AND (%(queue)s::text IS NULL OR j.queue_name = %(queue)s::text)
