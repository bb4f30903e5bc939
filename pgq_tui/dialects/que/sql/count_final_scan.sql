-- Expired (Que's dead: expired_at set by expire_job, past maximum_retry_count or by the job's own
-- expire), finished (finished_at set by finish_job, kept until the application deletes it) and
-- errored (error_count > 0, not finished nor expired, no Que lock: held.sql) jobs per queue, in Que's
-- order (que_determine_job_state: expired first). No index of Que's serves them (que_poll_idx
-- excludes the first two and holds no error_count): one scan, exact (cap1 is not used); in the poll
-- while the table is small, else in the background counter.
SELECT j.queue::text AS queue, count(*) FILTER (WHERE j.expired_at IS NOT NULL) AS dead,
       count(*) FILTER (WHERE j.expired_at IS NULL AND j.finished_at IS NOT NULL) AS done,
       count(*) FILTER (WHERE j.expired_at IS NULL AND j.finished_at IS NULL) AS errored
FROM {jobs} j
WHERE j.expired_at IS NOT NULL OR j.finished_at IS NOT NULL
   OR (j.error_count > 0 AND j.id <> ALL ({held}::bigint[]))
GROUP BY j.queue
