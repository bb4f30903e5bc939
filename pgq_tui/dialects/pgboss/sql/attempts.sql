-- One job's attempts: pg-boss keeps only the last failure's `output` (state retry or failed); earlier
-- attempts leave no trace in the job row. pg-boss counts a retry when it starts it, so the failed
-- attempt is retry_count + 1.
SELECT j.retry_count + 1 AS attempt,
       coalesce(j.completed_on, j.started_on) AS at, j.state::text AS outcome, NULL::text AS worker,
       left(coalesce(j.output ->> 'message', j.output #>> '{{value,message}}', j.output::text), 10000) AS error,
       left(j.output ->> 'stack', 10000) AS trace
FROM {job} j
WHERE j.id = %(id)s::uuid AND j.output IS NOT NULL AND j.state IN ('retry', 'failed')
LIMIT %(shown)s
