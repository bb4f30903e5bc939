-- Running jobs per queue, and of them the stuck ones by River's own JobRescuer rule: running with
-- attempted_at older than the rescue horizon ({rescue_after_s} s; River's RescueStuckJobsAfter,
-- 1 h by default). Through river_job_prioritized_fetching_index (state = 'running'): O(running jobs).
SELECT j.queue,
       least(count(*) FILTER (WHERE j.attempted_at >= now() - make_interval(secs => {rescue_after_s})),
             %(cap1)s) AS running,
       least(count(*) FILTER (WHERE j.attempted_at IS NULL
                                 OR j.attempted_at < now() - make_interval(secs => {rescue_after_s})),
             %(cap1)s) AS stuck
FROM {jobs} j
WHERE j.state = 'running'
GROUP BY j.queue
