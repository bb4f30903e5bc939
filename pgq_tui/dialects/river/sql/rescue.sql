-- River's own JobRescuer pass (JobGetStuck + JobRescueMany), on the chosen stuck jobs (guard_stuck.sql):
-- running with attempted_at older than {rescue_after_s} s. Each gets the rescuer's error appended to
-- errors (at, attempt, error "Stuck job rescued by JobRescuer", trace "") and
-- metadata."river:rescue_count" + 1, then: cancelled (finalized now) when a cancel was attempted;
-- retryable at River's default backoff ((errors + 1)^4 s, +-10 percent) while attempt < max_attempts;
-- else discarded (finalized now). River also skips a job whose own kind timeout is longer than the
-- horizon; the database does not record that timeout. Locked rows, guard re-checked on each.
{chosen}, decided AS (
    SELECT j.id,
           CASE WHEN j.metadata ? 'cancel_attempted_at' THEN 'cancelled'
                WHEN j.attempt < j.max_attempts THEN 'retryable'
                ELSE 'discarded' END AS next_state,
           coalesce(array_length(j.errors, 1), 0) + 1 AS error_count
    FROM {jobs} j JOIN chosen c ON c.id = j.id
)
UPDATE {jobs} j
SET errors = array_append(j.errors, jsonb_build_object(
        'at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        'attempt', greatest(j.attempt, 0), 'error', 'Stuck job rescued by JobRescuer', 'trace', '')),
    finalized_at = CASE WHEN d.next_state = 'retryable' THEN NULL ELSE now() END,
    scheduled_at = CASE WHEN d.next_state = 'retryable'
                        THEN now() + make_interval(secs => power(d.error_count, 4) * (0.9 + random() * 0.2))
                        ELSE j.scheduled_at END,
    metadata = j.metadata || jsonb_build_object('river:rescue_count',
        coalesce(CASE WHEN jsonb_typeof(j.metadata -> 'river:rescue_count') = 'number'
                      THEN (j.metadata ->> 'river:rescue_count')::int END, 0) + 1),
    state = d.next_state::{state_type}
FROM decided d
WHERE j.id = d.id AND ({guard})
RETURNING j.id
