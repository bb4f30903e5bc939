-- The guard of a resume of finished-badly workflows: dead-lettered (MAX_RECOVERY_ATTEMPTS_EXCEEDED),
-- and CANCELLED ones only when the operator names them (DBOS resumes both; a bulk resume takes only
-- the dead letter). Never SUCCESS or ERROR: DBOS's own resume refuses those.
j.status = 'MAX_RECOVERY_ATTEMPTS_EXCEEDED' OR (j.status = 'CANCELLED' AND %(ids)s::text[] IS NOT NULL)
