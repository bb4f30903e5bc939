-- The claim-cost probe (monitor/probe.py): Solid Queue's workers claim rows of
-- solid_queue_ready_executions of one queue by priority, job_id with FOR UPDATE SKIP LOCKED (then move
-- them to claimed_executions); this is that candidate scan with LIMIT 1 and no locking clause, through
-- index_solid_queue_poll_by_queue (queue_name, priority, job_id).
SELECT r.job_id AS id FROM {ready} r
WHERE r.queue_name = %(queue)s
ORDER BY r.priority, r.job_id
LIMIT 1
