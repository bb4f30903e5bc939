-- One job's attempts, newest first, from procrastinate_events: each `started` event opens an
-- attempt, the next outcome event (failed, deferred_for_retry, succeeded, cancelled, aborted) ends it.
-- procrastinate keeps no error text in the database (its worker logs the exception).
SELECT s.n::int AS attempt, coalesce(o.at, s.at) AS at, coalesce(o.type::text, 'started') AS outcome,
       NULL::text AS worker, NULL::text AS error, NULL::text AS trace
FROM (SELECT e.id, e.at, row_number() OVER (ORDER BY e.at, e.id) AS n
      FROM {events} e WHERE e.job_id = %(id)s::bigint AND e.type = 'started') s
LEFT JOIN LATERAL (
    SELECT x.type, x.at FROM {events} x
    WHERE x.job_id = %(id)s::bigint AND x.id > s.id
      AND x.type::text IN ('failed', 'deferred_for_retry', 'succeeded', 'cancelled', 'aborted')
    ORDER BY x.id LIMIT 1
) o ON true
ORDER BY s.n DESC
LIMIT %(shown)s
