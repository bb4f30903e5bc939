-- The guard of a reschedule (GoodJob::Job#reschedule_job): a scheduled job (unfinished, not
-- performed, scheduled_at in the future), not held by a session.
j.finished_at IS NULL AND j.performed_at IS NULL AND j.scheduled_at > {utcnow} AND NOT {job_locked}
