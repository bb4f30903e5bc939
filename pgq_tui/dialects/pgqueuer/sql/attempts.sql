-- One job's attempts, newest first, from pgqueuer's log (`<table>_log`: a row per status change,
-- indexed by (job_id, created DESC) since 0.19): each ended run (exception, successful, canceled,
-- deleted), numbered by the `picked` rows before it; an exception carries its traceback jsonb.
SELECT (SELECT count(*) FROM {log} p WHERE p.job_id = l.job_id AND p.status = 'picked'
          AND p.created <= l.created)::int AS attempt,
       l.created AS at, l.status::text AS outcome, NULL::text AS worker,
       left(coalesce(l.traceback ->> 'exception_type' || ': ' || (l.traceback ->> 'exception_message'),
                     l.traceback ->> 'exception_message'), 10000) AS error,
       left(l.traceback ->> 'traceback', 10000) AS trace
FROM {log} l
WHERE l.job_id = %(id)s::bigint AND l.status::text IN ('exception', 'successful', 'canceled', 'deleted')
ORDER BY l.created DESC, l.id DESC
LIMIT %(shown)s
