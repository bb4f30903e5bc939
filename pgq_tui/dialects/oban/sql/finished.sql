-- Jobs completed and discarded (failed for good) per queue in [%(since)s, %(until)s), from Oban's
-- completed_at and discarded_at (UTC timestamps without time zone): done/s and failed/s, whoever
-- writes. Oban has no index on completed_at: the engine runs this only while oban_jobs is small
-- (QueueModel.finished_scans); discarded_at has Oban's (state, discarded_at) index from v13.
SELECT j.queue,
       count(*) FILTER (WHERE j.state = 'completed') AS completed,
       count(*) FILTER (WHERE j.state = 'discarded') AS failed
FROM {jobs} j
WHERE (j.state = 'completed'
       AND j.completed_at >= (%(since)s::timestamptz AT TIME ZONE 'UTC')
       AND j.completed_at < (%(until)s::timestamptz AT TIME ZONE 'UTC'))
   OR (j.state = 'discarded'
       AND j.discarded_at >= (%(since)s::timestamptz AT TIME ZONE 'UTC')
       AND j.discarded_at < (%(until)s::timestamptz AT TIME ZONE 'UTC'))
GROUP BY j.queue
