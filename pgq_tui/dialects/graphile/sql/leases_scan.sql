-- Locked jobs, oldest lock first (stuck ones lead), at most %(rows)s, when no index serves locked
-- jobs: one scan with a top-N sort (leases.sql reads them through the advised index instead).
SELECT j.id, t.identifier AS queue, j.locked_by AS holder, 'unknown' AS liveness, NULL::int AS holder_pid,
       j.attempts::int AS attempts, j.max_attempts::int AS max_attempts, j.locked_at AS started_at,
       j.locked_at + interval '4 hours' AS expires_at,
       extract(epoch FROM j.locked_at + interval '4 hours' - now())::float8 AS seconds_left,
       j.locked_at + interval '4 hours' < now() AS stuck,
       CASE WHEN pg_column_size(j.payload) <= 65536 THEN left(j.payload::text, 200) END AS payload_preview
FROM {jobs} j
JOIN {tasks} t ON t.id = j.task_id
WHERE j.locked_at IS NOT NULL
ORDER BY j.locked_at, j.id
LIMIT %(rows)s
