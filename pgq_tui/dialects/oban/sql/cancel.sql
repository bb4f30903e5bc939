-- Oban's own cancel_job (Engine.cancel_all_jobs) on waiting jobs: state cancelled, cancelled_at now
-- (UTC). Oban's guard is "not cancelled, completed or discarded"; pgq-top also leaves executing jobs
-- alone: stopping one needs Oban's pkill signal to its producer, which pgq-top is not.
WITH chosen AS MATERIALIZED (
    SELECT j.id FROM {jobs} j
    WHERE j.state IN ({waiting})
      AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
      AND (%(queue)s::text IS NULL OR j.queue = %(queue)s::text)
    ORDER BY j.id LIMIT %(batch)s
    FOR UPDATE OF j SKIP LOCKED
)
UPDATE {jobs} j
SET state = 'cancelled', cancelled_at = now() AT TIME ZONE 'UTC'
FROM chosen c
WHERE j.id = c.id AND j.state IN ({waiting})
RETURNING j.id
