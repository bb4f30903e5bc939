-- Dead jobs with Graphile's last_error, most recently failed first, at most %(rows)s per task and in
-- total, through the advised index (task_id, updated_at) WHERE locked_at IS NULL AND attempts >=
-- max_attempts. updated_at is when the last attempt failed.
SELECT d.id, d.queue, d.attempts, d.max_attempts, d.finished_at, d.error, d.payload_preview
FROM {tasks} t
CROSS JOIN LATERAL (
    SELECT j.id, t.identifier AS queue, j.attempts::int AS attempts, j.max_attempts::int AS max_attempts,
           j.updated_at AS finished_at, left(j.last_error, 500) AS error,
           CASE WHEN pg_column_size(j.payload) <= 65536 THEN left(j.payload::text, 200) END
               AS payload_preview
    FROM {jobs} j
    WHERE j.locked_at IS NULL AND j.attempts >= j.max_attempts AND j.task_id = t.id
    ORDER BY j.updated_at DESC LIMIT %(rows)s
) d
ORDER BY d.finished_at DESC, d.id DESC
LIMIT %(rows)s
