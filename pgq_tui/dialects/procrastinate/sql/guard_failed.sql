-- The guard of a retry or a discard: failed jobs. None of them has a worker.
j.status = 'failed'
