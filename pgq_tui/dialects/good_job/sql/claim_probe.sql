-- The claim-cost probe (monitor/probe.py). good_job 4.19's dequeue (Job.perform_with_advisory_lock,
-- perform_with_skip_locked): unfinished, locked_by_id NULL, in the queue, scheduled_at <= now
-- (only_scheduled), in dequeueing order (priority ASC NULLS LAST, then created_at), LIMIT 1, no
-- locking clause (good_job then takes the advisory lock or FOR NO KEY UPDATE SKIP LOCKED).
SELECT j.id::text AS id FROM {gj} j
WHERE j.finished_at IS NULL AND j.locked_by_id IS NULL AND j.queue_name = %(queue)s
  AND j.scheduled_at <= {utcnow}
ORDER BY j.priority ASC NULLS LAST, j.created_at ASC
LIMIT 1
