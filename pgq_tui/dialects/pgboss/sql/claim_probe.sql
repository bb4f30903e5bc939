-- The claim-cost probe (monitor/probe.py). pg-boss 10's fetchNextJob takes jobs of one queue (name)
-- in a queued state (state < 'active': created or retry) whose start_after has passed, by priority
-- descending, created_on, id, with FOR UPDATE SKIP LOCKED. This is that candidate scan, LIMIT 1, no
-- locking clause: on the queue's own partition it reads pg-boss's fetch index j<hash>_i5 (name,
-- start_after) INCLUDE (priority, created_on, id) WHERE state < 'active', as the claim does.
SELECT j.id FROM {job} j
WHERE j.name = %(queue)s
  AND j.state < 'active'
  AND j.start_after < now()
ORDER BY j.priority DESC, j.created_on, j.id
LIMIT 1
