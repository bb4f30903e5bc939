-- The guard of a cancel: waiting jobs (available, scheduled, retryable, suspended). None is executing.
j.state IN ({waiting})
