-- The claim-cost probe (monitor/probe.py): Oban's fetch picks available rows of one queue with
-- attempt < max_attempts by priority, scheduled_at, id with FOR UPDATE SKIP LOCKED; this is that
-- candidate scan with LIMIT 1 and no locking clause, through oban_jobs' (state, queue, priority,
-- scheduled_at, id) index.
SELECT j.id FROM {jobs} j
WHERE j.state = 'available' AND j.queue = %(queue)s AND j.attempt < j.max_attempts
ORDER BY j.priority, j.scheduled_at, j.id
LIMIT 1
