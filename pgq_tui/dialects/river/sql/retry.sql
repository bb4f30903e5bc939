-- River's own JobRetry (the client's JobRetry, River UI's retry), on discarded jobs
-- (guard_discarded.sql): state available, scheduled_at now(), finalized_at cleared, and one more attempt
-- allowed when the job used them all (max_attempts + 1 where attempt = max_attempts). River refuses
-- running jobs and available jobs already due; pgq-top takes discarded ones only. The chosen rows are
-- locked, and the guard is re-checked on the locked row, so a job that changed meanwhile is left alone.
{chosen}
UPDATE {jobs} j
SET state = 'available',
    max_attempts = CASE WHEN j.attempt = j.max_attempts THEN j.max_attempts + 1 ELSE j.max_attempts END,
    finalized_at = NULL,
    scheduled_at = now()
FROM chosen c
WHERE j.id = c.id AND ({guard})
RETURNING j.id
