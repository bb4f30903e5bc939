-- Executing jobs per queue, and of them the stuck ones by Oban's Lifeline rule: attempted_at older
-- than rescue_after ({rescue_after_s} s; Lifeline's default is 60 min). Oban's timestamps are UTC
-- without time zone. Through oban_jobs_state_queue_priority_scheduled_at_id_index: O(executing jobs).
SELECT j.queue,
       least(count(*) FILTER (WHERE j.attempted_at >= (now() AT TIME ZONE 'UTC')
                                                     - make_interval(secs => {rescue_after_s})),
             %(cap1)s) AS running,
       least(count(*) FILTER (WHERE j.attempted_at IS NULL
                                 OR j.attempted_at < (now() AT TIME ZONE 'UTC')
                                                     - make_interval(secs => {rescue_after_s})),
             %(cap1)s) AS stuck
FROM {jobs} j
WHERE j.state = 'executing'
GROUP BY j.queue
