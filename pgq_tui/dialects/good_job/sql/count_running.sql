-- Running jobs held by a process (good_job's `running` scope, performed_at set and finished_at NULL,
-- with locked_by_id, which 4.x's Job#perform and skip-locked claim set), each judged by the stuck rule
-- (stuck.sql), %(cap1)s rows of each over all queues together, through good_job's
-- index_good_jobs_on_locked_by_id (locked_by_id) WHERE locked_by_id IS NOT NULL: as many rows as
-- jobs are being run, never the queued or finished ones. The alive ones are those of an alive
-- process (an index lookup by the alive processes' ids) and those whose own advisory lock is held
-- though their process is not alive; the latter are looked for only when a held lock is unexplained
-- (unexplained_lock.sql), so thousands of stuck jobs are not judged one by one to find none.
WITH running AS MATERIALIZED (
    (SELECT j.queue_name AS queue, false AS stuck
     FROM {gj} j WHERE j.locked_by_id = ANY ({alive}::uuid[]) AND j.finished_at IS NULL AND j.performed_at IS NOT NULL
     UNION ALL
     SELECT j.queue_name, false
     FROM {gj} j WHERE j.locked_by_id IS NOT NULL AND j.finished_at IS NULL AND j.performed_at IS NOT NULL
       AND NOT (j.locked_by_id = ANY ({alive}::uuid[])) AND {job_locked} AND {unexplained_lock}
     LIMIT %(cap1)s)
    UNION ALL
    (SELECT j.queue_name, true
     FROM {gj} j WHERE j.locked_by_id IS NOT NULL AND j.finished_at IS NULL AND j.performed_at IS NOT NULL
       AND ({stuck})
     LIMIT %(cap1)s)
)
SELECT r.queue::text AS queue, count(*) FILTER (WHERE NOT r.stuck) AS running,
       count(*) FILTER (WHERE r.stuck) AS stuck
FROM running r GROUP BY r.queue
