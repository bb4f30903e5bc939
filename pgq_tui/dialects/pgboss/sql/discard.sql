-- Discard failed jobs with pg-boss's own delete (boss.deleteJob), guarded: state = 'failed', re-checked
-- on the locked row.
WITH {chosen_failed}
DELETE FROM {job} j USING chosen
WHERE j.name = chosen.name AND j.id = chosen.id AND j.state = 'failed'
RETURNING j.id::text AS id
