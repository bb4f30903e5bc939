-- Finished-badly workflows through DBOS's own idx_workflow_status_failed (status, created_at)
-- WHERE status IN ('ERROR', 'CANCELLED', 'MAX_RECOVERY_ATTEMPTS_EXCEEDED'): each state read up to
-- %(cap1)s rows over all queues together (the index has no queue column), then counted per queue.
-- dead = MAX_RECOVERY_ATTEMPTS_EXCEEDED (DBOS's dead letter), failed = ERROR (the workflow raised;
-- DBOS does not resume it), cancelled = CANCELLED. DBOS clears queue_name when it cancels or
-- dead-letters a workflow, so those two count under {no_queue}.
WITH final AS MATERIALIZED (
    (SELECT {queue} AS queue, 'dead' AS state FROM {ws} j
     WHERE j.status = 'MAX_RECOVERY_ATTEMPTS_EXCEEDED' ORDER BY j.created_at LIMIT %(cap1)s)
    UNION ALL
    (SELECT {queue}, 'failed' FROM {ws} j WHERE j.status = 'ERROR' ORDER BY j.created_at LIMIT %(cap1)s)
    UNION ALL
    (SELECT {queue}, 'cancelled' FROM {ws} j WHERE j.status = 'CANCELLED' ORDER BY j.created_at
     LIMIT %(cap1)s)
)
SELECT f.queue::text AS queue, count(*) FILTER (WHERE f.state = 'dead') AS dead,
       count(*) FILTER (WHERE f.state = 'failed') AS failed,
       count(*) FILTER (WHERE f.state = 'cancelled') AS cancelled
FROM final f GROUP BY f.queue
