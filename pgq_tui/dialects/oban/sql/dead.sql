-- Discarded jobs, most recently discarded first, at most %(rows)s, through Oban's own
-- oban_jobs_state_discarded_at_index (state, discarded_at). The error is the last entry of errors[].
SELECT j.id, j.queue, j.attempt AS attempts, j.max_attempts,
       j.discarded_at AT TIME ZONE 'UTC' AS finished_at,
       j.errors[array_upper(j.errors, 1)] ->> 'error' AS error,
       CASE WHEN pg_column_size(j.args) <= 65536 THEN left(j.worker || ' ' || j.args::text, 200) END
           AS payload_preview
FROM {jobs} j
WHERE j.state = 'discarded' AND j.discarded_at IS NOT NULL
ORDER BY j.discarded_at DESC
LIMIT %(rows)s
