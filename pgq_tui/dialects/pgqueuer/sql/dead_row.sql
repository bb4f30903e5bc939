-- A dead list's row from d (id, queue, attempts, finished_at, payload_preview: dead.sql, dead_scan.sql):
-- the error is the exception pgqueuer logged with the failure (pgqueuer_log, through its own index
-- pgqueuer_log_job_id_status (job_id, created DESC)); pgqueuer keeps no max_attempts.
SELECT d.id, d.queue, d.attempts, NULL::int AS max_attempts, d.finished_at,
       (SELECT left(coalesce(l.traceback->>'exception_type' || ': ' || (l.traceback->>'exception_message'),
                             l.traceback::text), 500)
        FROM {log} l WHERE l.job_id = d.id AND l.status = 'failed'
        ORDER BY l.created DESC LIMIT 1) AS error,
       d.payload_preview
