-- pg-boss 10 and 12: failed jobs with pg-boss's recorded output (the error), most recently failed first, at most %(rows)s
-- per queue and in total. Two phases keep heap reads at %(rows)s however many queues there are: the
-- chosen jobs' keys from the advised index alone, (name, completed_on) INCLUDE (id) WHERE
-- state = 'failed', then only those rows, by pg-boss's primary key (name, id): a LATERAL lookup with
-- LIMIT 1, one probe per chosen row (as a plain join the generic plan hashed every failed job: see
-- leases.sql).
WITH chosen AS (
    SELECT d.name, d.id, d.completed_on
    FROM {queue} q
    CROSS JOIN LATERAL (
        SELECT j.name, j.id, j.completed_on
        FROM {job} j
        WHERE j.name = q.name AND j.state = 'failed'
        ORDER BY j.completed_on DESC LIMIT %(rows)s
    ) d
    WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
    ORDER BY d.completed_on DESC NULLS LAST, d.id
    LIMIT %(rows)s
)
SELECT j.id::text AS id, j.name AS queue, j.retry_count + 1 AS attempts, j.retry_limit + 1 AS max_attempts,
       j.completed_on AS finished_at,
       left(coalesce(j.output->>'message', j.output #>> '{{value,message}}', j.output::text), 500) AS error,
       CASE WHEN pg_column_size(j.data) <= 65536 THEN left(j.data::text, 200) END AS payload_preview
FROM chosen c
CROSS JOIN LATERAL (SELECT * FROM {job} j WHERE j.name = c.name AND j.id = c.id AND j.state = 'failed'
                    LIMIT 1) j
ORDER BY c.completed_on DESC NULLS LAST, c.id
