-- procrastinate: jobs that succeeded in the last hour, from its own events (procrastinate_events,
-- written by its triggers; `at` is the transaction's now()): due = scheduled_at (a retry's too), else
-- the `deferred` event; started = the last `started` event before the success. No index on `at`: a
-- scan (run in the background, bounded by its timeout). A job deleted on success is not seen.
SELECT j.queue_name AS queue, e.at AS finished_at,
       extract(epoch FROM s.at - coalesce(j.scheduled_at, d.at))::float8 AS wait_s,
       extract(epoch FROM e.at - s.at)::float8 AS run_s
FROM {events} e
JOIN {jobs} j ON j.id = e.job_id
LEFT JOIN LATERAL (SELECT max(x.at) AS at FROM {events} x
                   WHERE x.job_id = e.job_id AND x.type = 'started' AND x.at <= e.at) s ON true
LEFT JOIN LATERAL (SELECT min(x.at) AS at FROM {events} x
                   WHERE x.job_id = e.job_id AND x.type = 'deferred') d ON true
WHERE e.type = 'succeeded' AND e.at >= now() - interval '1 hour'
ORDER BY e.at DESC
LIMIT %(newest)s
