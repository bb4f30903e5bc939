-- The claim-cost probe (monitor/probe.py). pg-boss 12's fetchNextJob takes jobs of one queue in a
-- queued state (state < 'active'), not blocked, whose start_after has passed, by priority descending
-- then created_on, with FOR UPDATE SKIP LOCKED: this is that candidate scan, LIMIT 1, no locking
-- clause. It reads pg-boss's fetch index job_i11 (name, priority DESC, created_on, start_after)
-- WHERE state < 'active' AND NOT blocked, as the claim does.
SELECT j.id FROM {job} j
WHERE j.name = %(queue)s
  AND j.state < 'active'
  AND NOT j.blocked
  AND j.start_after <= now()
ORDER BY j.priority DESC, j.created_on
LIMIT 1
