-- One job's attempts, newest first: Oban appends one entry to `errors` per failed attempt (attempt,
-- at in UTC, error with its stacktrace formatted in); it records no worker per attempt.
SELECT (e.value ->> 'attempt')::int AS attempt,
       ((e.value ->> 'at')::timestamp AT TIME ZONE 'UTC') AS at,
       'errored'::text AS outcome, NULL::text AS worker,
       left(e.value ->> 'error', 10000) AS error, NULL::text AS trace
FROM {jobs} j
CROSS JOIN LATERAL unnest(j.errors) WITH ORDINALITY AS e(value, n)
WHERE j.id = %(id)s::bigint
ORDER BY e.n DESC
LIMIT %(shown)s
