-- Jobs that succeeded and failed for good per entrypoint in [%(since)s, %(until)s), from pgqueuer's
-- own log (a row per status change, `created` its transaction's now()): done/s and failed/s whoever
-- writes; pgqueuer deletes finished jobs from its queue table, so the log is where they are. A final
-- failure is logged `exception` (job deleted) or `failed` (on_failure="hold": the job is kept).
-- Served by pgqueuer's own index on the log's `created`.
SELECT l.entrypoint AS queue,
       count(*) FILTER (WHERE l.status = 'successful') AS completed,
       count(*) FILTER (WHERE l.status IN ('exception', 'failed')) AS failed
FROM {log} l
WHERE l.created >= %(since)s::timestamptz AND l.created < %(until)s::timestamptz
  AND l.status IN ('successful', 'exception', 'failed')
GROUP BY l.entrypoint
