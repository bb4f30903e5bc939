-- Failed jobs with pg-boss's recorded output (the error), most recently failed first, at most %(rows)s
-- per queue and in total, through the advised index (name, completed_on) WHERE state = 'failed'.
SELECT d.id::text AS id, d.queue, d.attempts, d.max_attempts, d.finished_at, d.error, d.payload_preview
FROM {queue} q
CROSS JOIN LATERAL (
    SELECT j.id, j.name AS queue, j.retry_count + 1 AS attempts, j.retry_limit + 1 AS max_attempts,
           j.completed_on AS finished_at,
           left(coalesce(j.output->>'message', j.output #>> '{{value,message}}', j.output::text), 500) AS error,
           CASE WHEN pg_column_size(j.data) <= 65536 THEN left(j.data::text, 200) END AS payload_preview
    FROM {job} j
    WHERE j.name = q.name AND j.state = 'failed'
    ORDER BY j.completed_on DESC LIMIT %(rows)s
) d
WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
ORDER BY d.finished_at DESC NULLS LAST, d.id
LIMIT %(rows)s
