-- Sessions of this database sitting idle inside a transaction, oldest transaction first. They hold
-- locks and, once they have written or taken a snapshot, the xmin horizon.
SELECT a.pid, a.backend_start, a.usename::text AS "user", a.application_name AS application,
       coalesce(host(a.client_addr), CASE WHEN a.client_port = -1 THEN 'local' END) AS client,
       a.state,
       greatest(0, extract(epoch FROM now() - a.xact_start))::float8 AS xact_age_s,
       greatest(0, extract(epoch FROM now() - a.state_change))::float8 AS state_age_s,
       a.query,
       greatest(age(a.backend_xmin), age(a.backend_xid)) AS backend_xmin_age,
       CASE WHEN a.wait_event IS NOT NULL THEN a.wait_event_type || ':' || a.wait_event END AS wait_event,
       a.application_name LIKE 'pgq-top%%' AS is_pgq_top
FROM pg_stat_activity a
WHERE a.datname = current_database() AND a.state LIKE 'idle in transaction%%'
ORDER BY a.xact_start NULLS LAST
LIMIT %(rows)s
