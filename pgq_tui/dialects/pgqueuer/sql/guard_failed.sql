-- The guard of a retry or a discard: failed jobs (held by entrypoints with on_failure="hold").
-- None of them is picked.
j.status = 'failed'
