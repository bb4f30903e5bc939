-- The guard of a requeue: stalled jobs, as procrastinate's get_stalled_jobs finds them: doing, worker
-- row gone or heartbeat older than {stalled_after_s} s. None of them has a live worker by that rule.
j.status = 'doing'
AND (j.worker_id IS NULL OR NOT EXISTS (
        SELECT 1 FROM {workers} w WHERE w.id = j.worker_id
          AND w.last_heartbeat >= now() - make_interval(secs => {stalled_after_s})))
