-- The claim-cost probe (monitor/probe.py). procrastinate 3's procrastinate_fetch_job_v2 takes todo
-- jobs of the worker's queues that are due (scheduled_at NULL or passed) and whose `lock` is not held
-- by a doing job or by an earlier (higher priority, else lower id) todo job, by priority descending,
-- id, with FOR UPDATE SKIP LOCKED. This is that candidate scan for one queue, the lock test
-- included, LIMIT 1, no locking clause: it walks procrastinate's own partial indexes
-- (procrastinate_jobs_priority_idx_v1 (priority DESC, id) WHERE status = 'todo', or the queue_name
-- index), as the claim does.
SELECT j.id FROM {jobs} j
WHERE NOT EXISTS (
        SELECT 1 FROM {jobs} o
        WHERE j.lock IS NOT NULL
          AND o.lock = j.lock
          AND (o.status = 'doing'
               OR (o.status = 'todo'
                   AND (o.priority > j.priority OR (o.priority = j.priority AND o.id < j.id)))))
  AND j.status = 'todo'
  AND j.queue_name = %(queue)s
  AND (j.scheduled_at IS NULL OR j.scheduled_at <= now())
ORDER BY j.priority DESC, j.id
LIMIT 1
