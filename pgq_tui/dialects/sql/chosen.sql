-- The lock-and-filter step of a guarded transition (dialects/guarded.py): the rows the action admits
-- (admitted.sql), at most %(batch)s in {order_column} order, locked, skipping those a worker holds.
-- The transition that follows re-checks {guard} on each locked row, so a job that changed meanwhile
-- is left alone.
WITH chosen AS MATERIALIZED (
    SELECT j.id FROM {jobs} j
    WHERE {admitted}
    ORDER BY j.{order_column} LIMIT %(batch)s
    FOR UPDATE OF j SKIP LOCKED
)
