-- Dead jobs, most recently failed first, at most %(rows)s, when no index serves them: one scan with a
-- top-N sort (dead.sql reads them through the advised index instead).
SELECT j.id, t.identifier AS queue, j.attempts::int AS attempts, j.max_attempts::int AS max_attempts,
       j.updated_at AS finished_at, left(j.last_error, 500) AS error,
       CASE WHEN pg_column_size(j.payload) <= 65536 THEN left(j.payload::text, 200) END AS payload_preview
FROM {jobs} j
JOIN {tasks} t ON t.id = j.task_id
WHERE j.locked_at IS NULL AND j.attempts >= j.max_attempts
ORDER BY j.updated_at DESC, j.id DESC
LIMIT %(rows)s
