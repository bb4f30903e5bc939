-- Failed jobs with pg-boss's recorded output, most recently failed first, at most %(rows)s, when no
-- index serves them: one scan with a top-N sort (dead.sql reads them through the advised index).
SELECT j.id::text AS id, j.name AS queue, j.retry_count + 1 AS attempts, j.retry_limit + 1 AS max_attempts,
       j.completed_on AS finished_at,
       left(coalesce(j.output->>'message', j.output #>> '{{value,message}}', j.output::text), 500) AS error,
       CASE WHEN pg_column_size(j.data) <= 65536 THEN left(j.data::text, 200) END AS payload_preview
FROM {job} j
WHERE j.state = 'failed' AND j.name NOT LIKE '\_\_pgboss\_\_%%'
ORDER BY j.completed_on DESC NULLS LAST, j.id
LIMIT %(rows)s
