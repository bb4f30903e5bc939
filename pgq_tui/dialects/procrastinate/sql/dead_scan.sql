-- Failed jobs, newest first, at most %(rows)s, when no index serves them: one scan with a top-N sort
-- (dead.sql reads them through the advised index instead).
SELECT j.id, j.queue_name::text AS queue, j.attempts, NULL::int AS max_attempts,
       (SELECT max(e.at) FROM {events} e WHERE e.job_id = j.id AND e.type = 'failed') AS finished_at,
       NULL::text AS error,
       CASE WHEN pg_column_size(j.args) <= 65536 THEN left(j.task_name || ' ' || j.args::text, 200) END
           AS payload_preview
FROM (SELECT * FROM {jobs} WHERE status = 'failed' ORDER BY id DESC LIMIT %(rows)s) j
ORDER BY j.id DESC
