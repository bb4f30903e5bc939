-- Wait and run time per queue over the last 5 minutes and the last hour (contract.LATENCY_COLUMNS):
-- p50, p95 and p99 (percentile_cont, interpolated) and the max, over the jobs that finished in each
-- span, from the framework's own timestamps. The dialect's latency_finished.sql supplies f: (queue,
-- finished_at, wait_s, run_s, grp, cap) of the jobs finished in the last hour, newest first, at most
-- `cap` of each group `grp` (one group of %(newest)s for the whole table, or one per queue where the
-- dialect reads queue by queue: latency_statement's per_queue). A span is `whole` when its group read
-- fewer than its cap, or when the oldest its group read is older than the span.
WITH f AS MATERIALIZED (
{finished}
), seen AS (SELECT f.grp, count(*) AS n, min(f.finished_at) AS oldest, max(f.cap) AS cap FROM f GROUP BY f.grp)
SELECT f.queue::text AS queue, w.span, count(*)::bigint AS jobs,
       percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY f.wait_s) AS wait,
       max(f.wait_s) AS wait_max,
       percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY f.run_s) AS run,
       max(f.run_s) AS run_max,
       bool_and(s.n < s.cap OR s.oldest <= now() - make_interval(secs => w.secs)) AS whole,
       max(s.cap)::bigint AS read_cap,
       bool_or(s.grp <> '') AS cap_per_queue,
       now() AS as_of
FROM f
JOIN seen s ON s.grp = f.grp
CROSS JOIN (VALUES ('5m', 300), ('1h', 3600)) AS w(span, secs)
WHERE f.finished_at >= now() - make_interval(secs => w.secs)
GROUP BY f.queue, w.span
