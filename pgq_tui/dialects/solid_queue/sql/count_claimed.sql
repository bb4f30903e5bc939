-- Claimed jobs per queue, and of them the stuck ones by Solid Queue's own rule: the claiming
-- process's last_heartbeat_at is {alive_threshold_s} s old or more (process_alive_threshold, 5 min:
-- the supervisor prunes such processes), or its process row is gone (an orphaned claim). UTC
-- timestamps. solid_queue_claimed_executions holds only in-flight jobs: O(claimed jobs), each job read
-- by its primary key (LATERAL ... LIMIT 1: never a merge join along the whole jobs table).
SELECT j.queue_name::text AS queue,
       least(count(*) FILTER (WHERE p.last_heartbeat_at > (now() AT TIME ZONE 'UTC')
                                                        - make_interval(secs => {alive_threshold_s})),
             %(cap1)s) AS running,
       least(count(*) FILTER (WHERE p.id IS NULL
                                 OR p.last_heartbeat_at <= (now() AT TIME ZONE 'UTC')
                                                           - make_interval(secs => {alive_threshold_s})),
             %(cap1)s) AS stuck
FROM {claimed} c
CROSS JOIN LATERAL (SELECT j.id, j.queue_name FROM {jobs} j WHERE j.id = c.job_id LIMIT 1) j
LEFT JOIN {processes} p ON p.id = c.process_id
GROUP BY j.queue_name
