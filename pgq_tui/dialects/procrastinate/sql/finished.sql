-- Jobs that succeeded and failed for good per queue in [%(since)s, %(until)s), from procrastinate's
-- own events (procrastinate_events, written by its triggers on each status change; `at` is the
-- transaction's now()): done/s and failed/s whoever writes. The queue is the job's, by primary key.
-- No index on `at`: the engine runs this only while the events table is small
-- (QueueModel.finished_scans). A job deleted on success (its events go with it) is not seen.
SELECT j.queue_name AS queue,
       count(*) FILTER (WHERE e.type = 'succeeded') AS completed,
       count(*) FILTER (WHERE e.type = 'failed') AS failed
FROM {events} e
JOIN {jobs} j ON j.id = e.job_id
WHERE e.at >= %(since)s::timestamptz AND e.at < %(until)s::timestamptz
  AND e.type IN ('succeeded', 'failed')
GROUP BY j.queue_name
