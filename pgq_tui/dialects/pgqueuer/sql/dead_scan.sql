-- Held failures, newest first, at most %(rows)s, when no index serves them: one scan with a top-N sort
-- (dead.sql reads them through the advised index instead).
SELECT d.id, d.queue, d.attempts, NULL::int AS max_attempts, d.finished_at,
       (SELECT left(coalesce(l.traceback->>'exception_type' || ': ' || (l.traceback->>'exception_message'),
                             l.traceback::text), 500)
        FROM {log} l WHERE l.job_id = d.id AND l.status = 'failed'
        ORDER BY l.created DESC LIMIT 1) AS error,
       d.payload_preview
FROM (SELECT j.id, j.entrypoint AS queue, j.attempts, j.updated AS finished_at,
             CASE WHEN octet_length(j.payload) <= 65536 THEN left(convert_from(j.payload, 'UTF8'), 200) END
                 AS payload_preview
      FROM {jobs} j WHERE j.status = 'failed'
      ORDER BY j.id DESC LIMIT %(rows)s) d
ORDER BY d.finished_at DESC, d.id DESC
