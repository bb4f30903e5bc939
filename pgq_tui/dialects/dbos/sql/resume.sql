-- DBOS 3.4's own resume (SystemDatabase.resume_workflows, dbos/_sys_db.py, as DBOS.resume_workflow
-- and `dbos workflow resume` run it) on the chosen workflows: status ENQUEUED on DBOS's internal
-- queue {internal_queue} (any executor of the application version dequeues it), owner_xid,
-- deduplication_id, started_at_epoch_ms, workflow_deadline_epoch_ms and completed_at cleared,
-- recovery_attempts 0, updated_at now (epoch ms). DBOS's guard (status not SUCCESS or ERROR) and the
-- action's are re-checked on the locked row.
{chosen}
UPDATE {ws} j
SET status = 'ENQUEUED',
    owner_xid = NULL,
    queue_name = {internal_queue},
    recovery_attempts = 0,
    workflow_deadline_epoch_ms = NULL,
    deduplication_id = NULL,
    started_at_epoch_ms = NULL,
    updated_at = (extract(epoch FROM now()) * 1000)::bigint,
    completed_at = NULL
FROM chosen c
WHERE j.workflow_uuid = c.workflow_uuid AND j.status NOT IN ('SUCCESS', 'ERROR') AND ({guard})
RETURNING j.workflow_uuid AS id
