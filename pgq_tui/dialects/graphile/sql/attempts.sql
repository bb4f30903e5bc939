-- One job's attempts: Graphile Worker keeps only the last error (`last_error`, set with updated_at
-- when the attempt failed); earlier attempts leave no trace. A locked job is in its next attempt (its
-- lock moved updated_at too): the error is the previous attempt's, its time unknown.
SELECT (CASE WHEN j.locked_at IS NOT NULL THEN j.attempts - 1 ELSE j.attempts END)::int AS attempt,
       CASE WHEN j.locked_at IS NULL THEN j.updated_at END AS at, 'failed'::text AS outcome, NULL::text AS worker,
       left(j.last_error, 10000) AS error, NULL::text AS trace
FROM {jobs} j
WHERE j.id = %(id)s::bigint AND j.last_error IS NOT NULL
LIMIT %(shown)s
