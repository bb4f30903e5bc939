-- Failed executions, most recent first, at most %(rows)s, through their primary key (id grows with
-- each failure). The error is Solid Queue's JSON (exception_class, message, backtrace): the first two.
SELECT j.id, j.queue_name::text AS queue,
       CASE WHEN left(j.arguments, 1) = '{{' THEN (j.arguments::jsonb ->> 'executions')::int END AS attempts, NULL::int AS max_attempts,
       f.created_at AT TIME ZONE 'UTC' AS finished_at,
       CASE WHEN left(f.error, 1) = '{{'
            THEN (f.error::jsonb ->> 'exception_class') || ': ' || (f.error::jsonb ->> 'message')
            ELSE f.error END AS error,
       CASE WHEN length(j.arguments) <= 65536 THEN left(j.class_name || ' ' || j.arguments, 200) END
           AS payload_preview
FROM (SELECT * FROM {failed} ORDER BY id DESC LIMIT %(rows)s) f
CROSS JOIN LATERAL (SELECT j.id, j.queue_name, j.class_name, j.arguments FROM {jobs} j
                    WHERE j.id = f.job_id LIMIT 1) j
ORDER BY f.id DESC
