-- The claim-cost probe (monitor/probe.py). pg-boss's fetchNextJob takes jobs of one queue (name) in a
-- queued state (state < 'active': created or retry; from schema 31 not blocked) whose start_after has
-- passed, by priority descending, then created_on (10.x and 11: then id), with FOR UPDATE SKIP
-- LOCKED. This is that candidate scan, LIMIT 1, no locking clause. It reads pg-boss's fetch index as
-- the claim does: 10.x's per-queue partition's j<hash>_i5 (name, start_after) INCLUDE (priority,
-- created_on, id) WHERE state < 'active'; the same job_i5 on job_common from schema 25; in 12.38
-- job_i11 (name, priority DESC, created_on, start_after) WHERE state < 'active' AND NOT blocked.
SELECT j.id FROM {job} j
WHERE j.name = %(queue)s
  AND j.state < 'active'
  AND NOT j.blocked  -- [31+]
  AND j.start_after < now()  -- [<25]
  AND j.start_after <= now()  -- [25+]
ORDER BY j.priority DESC, j.created_on
       , j.id  -- [<25]
LIMIT 1
