-- The claim-cost probe (monitor/probe.py). pg-boss 11 and 12's fetchNextJob takes jobs of one queue
-- in a queued state (state < 'active'; from schema 31 not blocked) whose start_after has passed, by
-- priority descending then created_on, with FOR UPDATE SKIP LOCKED: this is that candidate scan,
-- LIMIT 1, no locking clause. It reads pg-boss's fetch index, job_i5 (name, start_after) INCLUDE
-- (priority, created_on, id) WHERE state < 'active' before 12.38, job_i11 (name, priority DESC,
-- created_on, start_after) WHERE state < 'active' AND NOT blocked in 12.38, as the claim does.
SELECT j.id FROM {job} j
WHERE j.name = %(queue)s
  AND j.state < 'active'
  AND NOT j.blocked  -- [31+]
  AND j.start_after <= now()
ORDER BY j.priority DESC, j.created_on
LIMIT 1
