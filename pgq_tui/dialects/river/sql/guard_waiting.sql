-- The guard of a cancel: waiting jobs (available, scheduled, retryable, pending). None is running.
j.state IN ('available', 'scheduled', 'retryable', 'pending') AND j.finalized_at IS NULL
