-- Locked jobs, oldest lock first (stuck ones lead), at most %(rows)s stuck and %(rows)s others (each
-- list capped on its own: `n`, the row's place in its list), when no index serves locked jobs: one
-- scan (leases.sql reads them through the advised index instead).
SELECT j.id, t.identifier AS queue, j.locked_by AS holder, 'unknown' AS liveness, NULL::int AS holder_pid,
       j.attempts::int AS attempts, j.max_attempts::int AS max_attempts, j.locked_at AS started_at,
       j.locked_at + interval '4 hours' AS expires_at,
       extract(epoch FROM j.locked_at + interval '4 hours' - now())::float8 AS seconds_left,
       j.locked_at + interval '4 hours' < now() AS stuck,
       CASE WHEN pg_column_size(j.payload) <= 65536 THEN left(j.payload::text, 200) END AS payload_preview
FROM (SELECT j.*, row_number() OVER (PARTITION BY j.locked_at + interval '4 hours' < now()
                                     ORDER BY j.locked_at, j.id) AS n
      FROM {jobs} j WHERE j.locked_at IS NOT NULL) j
JOIN {tasks} t ON t.id = j.task_id
WHERE j.n <= %(rows)s
ORDER BY j.locked_at, j.id
