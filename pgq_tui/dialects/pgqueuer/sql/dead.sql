-- Failed jobs, most recent first, at most %(rows)s per entrypoint and in total, through the advised
-- index (entrypoint, id) WHERE status = 'failed'; the error is the exception pgqueuer logged with the
-- failure (pgqueuer_log, through its own index pgqueuer_log_job_id_status (job_id, created DESC)).
{queues}
{dead_row}
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
