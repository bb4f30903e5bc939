-- Wait and run time per queue over the last 5 minutes and the last hour (contract.LATENCY_COLUMNS):
-- p50, p95 and p99 (percentile_cont, interpolated) and the max, over the jobs that finished in each
-- span, from the framework's own timestamps. The dialect's latency_finished.sql supplies f: (queue,
-- finished_at, wait_s, run_s) of the jobs finished in the last hour, newest first, at most %(newest)s
-- of them: a span is `whole` when fewer were read, or when the oldest read is older than the span.
WITH f AS MATERIALIZED (
{finished}
), seen AS (SELECT count(*) AS n, min(f.finished_at) AS oldest FROM f)
SELECT f.queue::text AS queue, w.span, count(*)::bigint AS jobs,
       percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY f.wait_s) AS wait,
       max(f.wait_s) AS wait_max,
       percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY f.run_s) AS run,
       max(f.run_s) AS run_max,
       bool_and(s.n < %(newest)s OR s.oldest <= now() - make_interval(secs => w.secs)) AS whole,
       now() AS as_of
FROM f
CROSS JOIN seen s
CROSS JOIN (VALUES ('5m', 300), ('1h', 3600)) AS w(span, secs)
WHERE f.finished_at >= now() - make_interval(secs => w.secs)
GROUP BY f.queue, w.span
