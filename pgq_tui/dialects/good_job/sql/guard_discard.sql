-- The guard of a discard (GoodJob::Job#discard_job): an unfinished job good_job could lock itself
-- (with_appropriate_lock): not finished (its ActionForStateMismatchError), not held by a live session
-- (no advisory lock on it), and either waiting (not performed; locked_by_id NULL) or stuck by the
-- rule (stuck.sql). A running job of a live worker is never taken (good_job's force_discard_job is
-- not offered).
j.finished_at IS NULL AND NOT {job_locked}
AND ((j.performed_at IS NULL AND j.locked_by_id IS NULL) OR ({stuck}))
