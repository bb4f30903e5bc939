-- Discarded jobs (out of attempts), most recently finalized first, at most %(rows)s, through River's
-- river_job_state_and_finalized_at_index (state, finalized_at) WHERE finalized_at IS NOT NULL.
-- The error is the last entry of errors[] (River appends one per failed attempt).
SELECT j.id, j.queue, j.attempt::int AS attempts, j.max_attempts::int AS max_attempts,
       j.finalized_at AS finished_at,
       j.errors[array_upper(j.errors, 1)] ->> 'error' AS error,
       CASE WHEN pg_column_size(j.args) <= 65536 THEN left(j.kind || ' ' || j.args::text, 200) END
           AS payload_preview
FROM {jobs} j
WHERE j.state = 'discarded' AND j.finalized_at IS NOT NULL
ORDER BY j.finalized_at DESC
LIMIT %(rows)s
