-- good_job 4.19's own discard (GoodJob::Job#discard_job -> _discard_job) on the chosen jobs:
-- finished_at now, error "GoodJob::Job::DiscardJobError: <message>" (format_error), error_event
-- discarded (5, ErrorEvents). Like with_appropriate_lock, the job's advisory lock is taken for the
-- transaction (pg_try_advisory_xact_lock on good_job's key): a worker holding it keeps its job.
-- What it does not do: ActiveJob's `discard` instrumentation and a batch's callbacks (in the app).
{chosen}, locked AS MATERIALIZED (
    -- the advisory lock of the chosen rows only (never a scan's), for this transaction
    SELECT c.id FROM chosen c
    WHERE pg_try_advisory_xact_lock(('x' || substr(md5({jobs_name} || '-' || c.id::text), 1, 16))::bit(64)::bigint)
)
UPDATE {gj} j
SET finished_at = {utcnow},
    error = 'GoodJob::Job::DiscardJobError: ' || {discard_message},
    error_event = 5,
    updated_at = {utcnow}
FROM locked c
WHERE j.id = c.id AND j.finished_at IS NULL AND ({guard})
RETURNING j.id::text AS id
