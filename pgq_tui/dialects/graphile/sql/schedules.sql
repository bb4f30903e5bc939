-- Graphile Worker's known crontabs (_private_known_crontabs: identifier, known_since,
-- last_execution): the last run only; the expressions live in the app's crontab file (--crontab).
SELECT k.identifier AS name, NULL::text AS expression, 'UTC' AS timezone, k.identifier AS queue,
       k.last_execution AS last_run, NULL::timestamptz AS next_run, k.known_since AS created_at,
       '{{}}'::jsonb AS details
FROM {crontabs} k
ORDER BY k.identifier
