-- Jobs finished and failed per queue in [%(since)s, %(until)s), from Solid Queue's own timestamps (UTC,
-- without time zone): a job's finished_at (kept while preserve_finished_jobs, the default; served by
-- its index on finished_at) and a failed execution's created_at (no index: the engine runs this only
-- while solid_queue_failed_executions is small, QueueModel.finished_scans). done/s and failed/s.
SELECT queue, sum(completed)::bigint AS completed, sum(failed)::bigint AS failed
FROM (
    SELECT j.queue_name AS queue, count(*) AS completed, 0 AS failed
    FROM {jobs} j
    WHERE j.finished_at >= (%(since)s::timestamptz AT TIME ZONE 'UTC')
      AND j.finished_at < (%(until)s::timestamptz AT TIME ZONE 'UTC')
    GROUP BY j.queue_name
    UNION ALL
    SELECT j.queue_name, 0, count(*)
    FROM {failed} f
    JOIN {jobs} j ON j.id = f.job_id
    WHERE f.created_at >= (%(since)s::timestamptz AT TIME ZONE 'UTC')
      AND f.created_at < (%(until)s::timestamptz AT TIME ZONE 'UTC')
    GROUP BY j.queue_name
) t
GROUP BY queue
