-- Retry failed jobs with pg-boss's own retry transition (boss.retry, retryJobs): state retry,
-- retry_limit + 1; from schema 37 (12.26) also completed_on cleared and start_after at least now().
-- Guard, re-checked on the locked row: state = 'failed'.
WITH {chosen_failed}
UPDATE {job} j
SET state = 'retry', retry_limit = j.retry_limit + 1
    , completed_on = NULL, start_after = greatest(j.start_after, now())  -- [37+]
FROM chosen
WHERE j.name = chosen.name AND j.id = chosen.id AND j.state = 'failed'
RETURNING j.id::text AS id
