-- good_job 4.19's own reschedule (GoodJob::Job#reschedule_job with its default, Time.current) on the
-- chosen jobs: scheduled_at now, so the next free execution thread dequeues it. Its guard (not
-- finished) and the action's are re-checked on the locked row, under the job's advisory lock for the
-- transaction (with_appropriate_lock).
{chosen}, locked AS MATERIALIZED (
    -- the advisory lock of the chosen rows only (never a scan's), for this transaction
    SELECT c.id FROM chosen c
    WHERE pg_try_advisory_xact_lock(('x' || substr(md5({jobs_name} || '-' || c.id::text), 1, 16))::bit(64)::bigint)
)
UPDATE {gj} j
SET scheduled_at = {utcnow},
    updated_at = {utcnow}
FROM locked c
WHERE j.id = c.id AND j.finished_at IS NULL AND ({guard})
RETURNING j.id::text AS id
