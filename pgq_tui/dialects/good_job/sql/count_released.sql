-- Released jobs (count_released_scan.sql's rule: performed_at set, finished_at NULL, no locked_by_id)
-- through the index pgq-top's advice names, (queue_name) WHERE finished_at IS NULL AND performed_at IS
-- NOT NULL AND locked_by_id IS NULL: only the released rows, %(cap1)s of them over all queues.
SELECT r.queue::text AS queue, count(*) AS released
FROM (SELECT j.queue_name AS queue FROM {gj} j
      WHERE j.finished_at IS NULL AND j.performed_at IS NOT NULL AND j.locked_by_id IS NULL
      LIMIT %(cap1)s) r
GROUP BY 1
