-- The claim-cost probe (monitor/probe.py). Graphile Worker 0.17's get_job takes jobs that are
-- available (is_available: unlocked, attempts < max_attempts), due (run_at <= now()), of the tasks
-- the worker serves, outside any named queue or in one that is available, by priority, run_at, with
-- FOR UPDATE SKIP LOCKED (and SKIP LOCKED on the queue rows). This is that candidate scan for one
-- task (pgq-top's queue), LIMIT 1, no locking clause: it walks Graphile's own jobs_main_index
-- (priority, run_at) INCLUDE (id, task_id, job_queue_id) WHERE is_available, as the claim does.
SELECT j.id FROM {jobs} j
WHERE j.is_available = true
  AND j.run_at <= now()
  AND j.task_id = (SELECT t.id FROM {tasks} t WHERE t.identifier = %(queue)s)
  AND (j.job_queue_id IS NULL
       OR j.job_queue_id IN (SELECT q.id FROM {queues} q WHERE q.is_available = true))
ORDER BY j.priority, j.run_at
LIMIT 1
