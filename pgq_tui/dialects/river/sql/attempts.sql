-- One job's attempts, newest first: River appends one entry to `errors` per failed attempt (attempt,
-- at, error, trace); `attempted_by` names the client of each attempt while River has not trimmed it
-- (it keeps the last 100), so the worker is shown only when the array is whole.
SELECT (e.value ->> 'attempt')::int AS attempt, (e.value ->> 'at')::timestamptz AS at,
       'errored'::text AS outcome,
       CASE WHEN cardinality(j.attempted_by) = j.attempt
            THEN j.attempted_by[(e.value ->> 'attempt')::int] END AS worker,
       left(e.value ->> 'error', 10000) AS error, left(nullif(e.value ->> 'trace', ''), 10000) AS trace
FROM {jobs} j
CROSS JOIN LATERAL unnest(j.errors) WITH ORDINALITY AS e(value, n)
WHERE j.id = %(id)s::bigint
ORDER BY e.n DESC
LIMIT %(shown)s
