-- Failed jobs, most recently failed first, at most %(rows)s per queue and in total. Two phases keep
-- heap reads at %(rows)s however many queues there are: the chosen ids from the advised index alone,
-- (queue_name, id) WHERE status = 'failed' (its queue list a recursive skip-scan over it), then only
-- those rows by primary key: a LATERAL lookup with LIMIT 1, one probe per chosen id under any plan (as
-- a plain join, the monitor's generic plan, its LIMIT a parameter, may merge or hash every failed
-- job). procrastinate stores no error text (only the `failed` event's time, read
-- through procrastinate_events_job_id_fkey_v1).
{queues}, chosen AS (
    SELECT c.id
    FROM queues q
    CROSS JOIN LATERAL (SELECT j.id FROM {jobs} j WHERE j.status = 'failed' AND j.queue_name = q.queue
                        ORDER BY j.id DESC LIMIT %(rows)s) c
    WHERE q.queue IS NOT NULL
    ORDER BY c.id DESC
    LIMIT %(rows)s
)
SELECT j.id, j.queue_name::text AS queue, j.attempts, NULL::int AS max_attempts,
       (SELECT max(e.at) FROM {events} e WHERE e.job_id = j.id AND e.type = 'failed') AS finished_at,
       NULL::text AS error,
       CASE WHEN pg_column_size(j.args) <= 65536 THEN left(j.task_name || ' ' || j.args::text, 200) END
           AS payload_preview
FROM chosen c
CROSS JOIN LATERAL (SELECT * FROM {jobs} j WHERE j.id = c.id AND j.status = 'failed' LIMIT 1) j
ORDER BY j.id DESC
