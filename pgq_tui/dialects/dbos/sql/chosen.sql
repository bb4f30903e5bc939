-- The lock-and-filter step of a guarded transition: the workflows the action admits (admitted.sql),
-- at most %(batch)s, oldest first, locked, skipping those a DBOS executor is claiming. The
-- transition re-checks the guard on each locked row, so a workflow that changed meanwhile is left
-- alone.
WITH chosen AS MATERIALIZED (
    SELECT j.workflow_uuid FROM {ws} j
    WHERE {admitted}
    ORDER BY j.created_at, j.workflow_uuid LIMIT %(batch)s
    FOR UPDATE OF j SKIP LOCKED
)
