-- The claim-cost probe (monitor/probe.py). pgqueuer 1.x's dequeue takes, per entrypoint, queued
-- jobs whose execute_after has passed, by priority descending, id, with FOR UPDATE SKIP LOCKED
-- (beside it, a second scan re-picks picked jobs with a stale heartbeat). This is the queued
-- candidate scan for one entrypoint (pgq-top's queue), LIMIT 1, no locking clause: it walks
-- pgqueuer's own pgqueuer_ep_prio_id_idx (entrypoint, priority DESC, id) WHERE status = 'queued',
-- as the claim does.
SELECT j.id FROM {jobs} j
WHERE j.entrypoint = %(queue)s
  AND j.status = 'queued'
  AND j.execute_after < now()
ORDER BY j.priority DESC, j.id
LIMIT 1
