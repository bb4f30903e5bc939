-- Failed jobs, most recently failed first, at most %(rows)s per queue and in total, through the
-- advised index (queue_name, id) WHERE status = 'failed'. procrastinate stores no error text (only
-- the `failed` event's time, read through procrastinate_events_job_id_fkey_v1).
WITH RECURSIVE q AS (
    (SELECT queue_name FROM {jobs} WHERE status = 'failed' ORDER BY queue_name LIMIT 1)
    UNION ALL
    SELECT (SELECT j.queue_name FROM {jobs} j WHERE j.status = 'failed' AND j.queue_name > q.queue_name
            ORDER BY j.queue_name LIMIT 1)
    FROM q WHERE q.queue_name IS NOT NULL
)
SELECT d.id, d.queue, d.attempts, NULL::int AS max_attempts,
       (SELECT max(e.at) FROM {events} e WHERE e.job_id = d.id AND e.type = 'failed') AS finished_at,
       NULL::text AS error, d.payload_preview
FROM q
CROSS JOIN LATERAL (
    SELECT j.id, j.queue_name::text AS queue, j.attempts,
           CASE WHEN pg_column_size(j.args) <= 65536 THEN left(j.task_name || ' ' || j.args::text, 200) END
               AS payload_preview
    FROM {jobs} j WHERE j.status = 'failed' AND j.queue_name = q.queue_name
    ORDER BY j.id DESC LIMIT %(rows)s
) d
WHERE q.queue_name IS NOT NULL
ORDER BY d.id DESC
LIMIT %(rows)s
