-- Expired (Que's dead: expired_at set by expire_job, past maximum_retry_count or by the job's own
-- expire) and finished (finished_at set by finish_job, kept until the application deletes it) jobs
-- per queue, in Que's order (que_determine_job_state: expired first). No index of Que's serves them
-- (que_poll_idx excludes both): one scan, exact (cap1 is not used); in the poll while the table is
-- small, else in the background counter.
SELECT j.queue::text AS queue, count(*) FILTER (WHERE j.expired_at IS NOT NULL) AS dead,
       count(*) FILTER (WHERE j.expired_at IS NULL) AS done
FROM {jobs} j
WHERE j.expired_at IS NOT NULL OR j.finished_at IS NOT NULL
GROUP BY j.queue
