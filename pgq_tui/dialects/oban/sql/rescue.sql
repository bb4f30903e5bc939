-- Oban's own Lifeline rescue (Engine.rescue_jobs), on the chosen stuck jobs: executing with
-- attempted_at older than {rescue_after_s} s (UTC). available while attempt < max_attempts, else
-- discarded with discarded_at now (UTC). The chosen rows are locked and the guard re-checked.
WITH chosen AS MATERIALIZED (
    SELECT j.id FROM {jobs} j
    WHERE j.state = 'executing'
      AND (j.attempted_at IS NULL
           OR j.attempted_at < (now() AT TIME ZONE 'UTC') - make_interval(secs => {rescue_after_s}))
      AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
      AND (%(queue)s::text IS NULL OR j.queue = %(queue)s::text)
    ORDER BY j.id LIMIT %(batch)s
    FOR UPDATE OF j SKIP LOCKED
)
UPDATE {jobs} j
SET state = CASE WHEN j.attempt < j.max_attempts THEN 'available' ELSE 'discarded' END::{state_type},
    discarded_at = CASE WHEN j.attempt < j.max_attempts THEN j.discarded_at ELSE now() AT TIME ZONE 'UTC' END
FROM chosen c
WHERE j.id = c.id AND j.state = 'executing'
  AND (j.attempted_at IS NULL
       OR j.attempted_at < (now() AT TIME ZONE 'UTC') - make_interval(secs => {rescue_after_s}))
RETURNING j.id
