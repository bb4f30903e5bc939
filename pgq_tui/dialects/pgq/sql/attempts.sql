-- One job's attempts, newest first: pgq-top's queue keeps the last few in `attempt_log` (a jsonb
-- array, newest first, capped by the fail and reap statements that append to it: attempt, at,
-- worker, the error's first line).
SELECT (e.value ->> 'attempt')::int AS attempt, (e.value ->> 'at')::timestamptz AS at,
       e.value ->> 'outcome' AS outcome, e.value ->> 'worker' AS worker, e.value ->> 'error' AS error,
       NULL::text AS trace
FROM {jobs} j
CROSS JOIN LATERAL jsonb_array_elements(j.attempt_log) WITH ORDINALITY AS e(value, n)
WHERE j.id = %(id)s::bigint
ORDER BY e.n
LIMIT %(shown)s
