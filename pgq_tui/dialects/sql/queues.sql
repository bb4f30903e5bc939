-- The queues that hold jobs in one state (dialects/skipscan.py): a recursive skip-scan, one probe per
-- queue of an index on ({queue_column}) WHERE {state_column} = <the state>, however many jobs each
-- queue holds. The state is bound as a literal, never a parameter, so that the planner matches the
-- partial index under a generic plan too.
WITH RECURSIVE queues AS (
    (SELECT j.{queue_column} AS queue FROM {jobs} j WHERE j.{state_column} = {state}
     ORDER BY j.{queue_column} LIMIT 1)
    UNION ALL
    SELECT (SELECT j.{queue_column} FROM {jobs} j
            WHERE j.{state_column} = {state} AND j.{queue_column} > q.queue
            ORDER BY j.{queue_column} LIMIT 1)
    FROM queues q WHERE q.queue IS NOT NULL
)
