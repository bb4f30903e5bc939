-- Jobs created (created_on), completed and failed for good (completed_on, set by pg-boss's complete and
-- final fail) per queue in [%(since)s, %(until)s): enqueued/s (pg-boss's ids are uuids, so no id range
-- to follow), done/s and failed/s, whoever writes. pg-boss has no index on created_on, so this reads
-- every partition of job: the engine runs it only while job is small (QueueModel.finished_scans).
-- A job completed and archived (or deleted) within one poll interval is not seen.
SELECT j.name AS queue,
       count(*) FILTER (WHERE j.created_on >= %(since)s::timestamptz
                          AND j.created_on < %(until)s::timestamptz) AS enqueued,
       count(*) FILTER (WHERE j.state = 'completed' AND j.completed_on >= %(since)s::timestamptz
                          AND j.completed_on < %(until)s::timestamptz) AS completed,
       count(*) FILTER (WHERE j.state = 'failed' AND j.completed_on >= %(since)s::timestamptz
                          AND j.completed_on < %(until)s::timestamptz) AS failed
FROM {job} j
WHERE j.name NOT LIKE '\_\_pgboss\_\_%%'
  AND (j.created_on >= %(since)s::timestamptz OR j.completed_on >= %(since)s::timestamptz)
GROUP BY j.name
