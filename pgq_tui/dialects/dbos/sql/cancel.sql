-- DBOS 3.4's own cancel (SystemDatabase.cancel_workflows, dbos/_sys_db.py, as DBOS.cancel_workflow
-- and `dbos workflow cancel` run it) on the chosen workflows: status CANCELLED, taken off its queue
-- (queue_name NULL), owner_xid, deduplication_id and started_at_epoch_ms cleared, updated_at and
-- completed_at now (epoch ms). A PENDING workflow's executor sees the status at its next step and
-- stops. DBOS's guard (status not SUCCESS or ERROR) and the action's are re-checked on the locked row.
{chosen}
UPDATE {ws} j
SET status = 'CANCELLED',
    owner_xid = NULL,
    queue_name = NULL,
    deduplication_id = NULL,
    started_at_epoch_ms = NULL,
    updated_at = (extract(epoch FROM now()) * 1000)::bigint,
    completed_at = (extract(epoch FROM now()) * 1000)::bigint
FROM chosen c
WHERE j.workflow_uuid = c.workflow_uuid AND j.status NOT IN ('SUCCESS', 'ERROR') AND ({guard})
RETURNING j.workflow_uuid AS id
