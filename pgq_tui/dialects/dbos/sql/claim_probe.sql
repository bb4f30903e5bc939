-- The claim-cost probe (monitor/probe.py). DBOS 3.4's start_queued_workflows (dbos/_sys_db.py)
-- selects a queue's ENQUEUED workflows by priority, then created_at, FOR UPDATE SKIP LOCKED (NOWAIT
-- under a global concurrency or rate limit), also filtered by application_version and
-- application_name; this is that scan for one queue, LIMIT 1, no locking clause, walking
-- idx_workflow_status_in_flight_v2 (queue_name, status, priority, created_at) as the claim does.
SELECT j.workflow_uuid AS id FROM {ws} j
WHERE j.queue_name = %(queue)s AND j.status = 'ENQUEUED'
ORDER BY j.priority, j.created_at
LIMIT 1
