-- Failed jobs, most recent first, at most %(rows)s per entrypoint and in total, through the advised
-- index (entrypoint, id) WHERE status = 'failed'; the error is the exception pgqueuer logged with the
-- failure (pgqueuer_log, through its own index pgqueuer_log_job_id_status (job_id, created DESC)).
{queues}
SELECT d.id, d.queue, d.attempts, NULL::int AS max_attempts, d.finished_at,
       (SELECT left(coalesce(l.traceback->>'exception_type' || ': ' || (l.traceback->>'exception_message'),
                             l.traceback::text), 500)
        FROM {log} l WHERE l.job_id = d.id AND l.status = 'failed'
        ORDER BY l.created DESC LIMIT 1) AS error,
       d.payload_preview
FROM queues q
CROSS JOIN LATERAL (
    SELECT j.id, j.entrypoint AS queue, j.attempts, j.updated AS finished_at,
           CASE WHEN octet_length(j.payload) <= 65536 THEN left(convert_from(j.payload, 'UTF8'), 200) END
               AS payload_preview
    FROM {jobs} j WHERE j.status = 'failed' AND j.entrypoint = q.queue
    ORDER BY j.id DESC LIMIT %(rows)s
) d
WHERE q.queue IS NOT NULL
ORDER BY d.finished_at DESC, d.id DESC
LIMIT %(rows)s
