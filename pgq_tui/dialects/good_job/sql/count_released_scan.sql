-- Released jobs: performed_at set, finished_at NULL, no locked_by_id (GoodJob::Process.cleanup
-- cleared it when their process went inactive, or a pre-4.x worker ran them). good_job's `running`
-- scope still counts them, and its dequeue (unfinished, locked_by_id NULL, scheduled_at <= now)
-- takes them again like queued ones, marking the interrupted attempt. No index tells them from the
-- queued rows (good_job has none on performed_at): one scan, exact (cap1 is not used); in the poll
-- while the table is small, else in the background counter.
SELECT j.queue_name::text AS queue, count(*) AS released
FROM {gj} j
WHERE j.finished_at IS NULL AND j.performed_at IS NOT NULL AND j.locked_by_id IS NULL
GROUP BY 1
