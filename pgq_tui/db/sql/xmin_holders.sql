-- What holds the cluster's xmin horizon back (vacuum cannot remove rows newer than it), oldest
-- first, cluster-wide: a transaction in any database pins it for every table. A backend counts by its
-- snapshot (backend_xmin) or its own transaction id (backend_xid: a writer idle in transaction has no
-- snapshot between statements but still pins the horizon).
SELECT * FROM (
    SELECT 'backend' AS kind, a.pid::text AS name,
           greatest(age(a.backend_xmin), age(a.backend_xid)) AS xmin_age,
           extract(epoch FROM now() - a.xact_start)::float8 AS age_s,
           concat_ws(' ', a.usename || '@' || a.datname, nullif(a.application_name, ''), a.state) AS detail,
           a.application_name LIKE 'pgq-top%%' AS is_pgq_top
    FROM pg_stat_activity a
    WHERE (a.backend_xmin IS NOT NULL OR a.backend_xid IS NOT NULL) AND a.pid <> pg_backend_pid()
    UNION ALL
    SELECT 'prepared transaction', p.gid, age(p.transaction),
           extract(epoch FROM now() - p.prepared)::float8,
           p.owner::text || '@' || p.database::text, false
    FROM pg_prepared_xacts p
    UNION ALL
    SELECT 'replication slot', r.slot_name::text, greatest(age(r.xmin), age(r.catalog_xmin)), NULL::float8,
           concat_ws(' ', r.slot_type, CASE WHEN r.active THEN 'active' ELSE 'inactive' END,
                     'xmin age ' || age(r.xmin), 'catalog_xmin age ' || age(r.catalog_xmin)),
           false
    FROM pg_replication_slots r
    WHERE r.xmin IS NOT NULL OR r.catalog_xmin IS NOT NULL
) h
ORDER BY h.xmin_age DESC, h.age_s DESC NULLS LAST
LIMIT %(rows)s
