-- Capped counts per state and queue (dialects/skipscan.py), through an index on (state, queue, ...):
-- a recursive skip-scan finds each state's queues ({states}, literals of the enum {state_type}), then
-- each count is an index range that stops at %(cap1)s entries: O(queues x cap1), flat at any table
-- size. The CTE counted(queue, state, n).
WITH RECURSIVE sq AS (
    SELECT s.state, (SELECT j.queue FROM {jobs} j WHERE j.state = s.state ORDER BY j.queue LIMIT 1) AS queue
    FROM unnest(ARRAY[{states}]::{state_type}[]) AS s(state)
    UNION ALL
    SELECT sq.state, (SELECT j.queue FROM {jobs} j WHERE j.state = sq.state AND j.queue > sq.queue
                      ORDER BY j.queue LIMIT 1)
    FROM sq WHERE sq.queue IS NOT NULL
), counted AS (
    SELECT sq.queue, sq.state::text AS state,
           (SELECT count(*) FROM (SELECT 1 FROM {jobs} j WHERE j.state = sq.state AND j.queue = sq.queue
                LIMIT %(cap1)s) x) AS n
    FROM sq WHERE sq.queue IS NOT NULL
)
