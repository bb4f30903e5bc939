-- What holds an xmin horizon back (vacuum cannot remove rows newer than it), oldest first, and how
-- far each one reaches (`scope`): not every holder holds back this database's tables.
--   database        a backend or prepared transaction in this database: it holds this database's
--                   tables. A backend counts by its snapshot (backend_xmin) or its own transaction id
--                   (backend_xid: a writer idle in transaction has no snapshot between statements).
--   other database  one in another database: vacuum computes a table's horizon from its own
--                   database's transactions (and walsenders) only, so it holds none of this one's
--                   rows (ComputeXidHorizons since PostgreSQL 14, GetOldestXmin's database filter
--                   before). Its xid does sit in every snapshot taken while it runs: a session of this
--                   database that keeps such a snapshot is listed by itself, as `database`.
--   cluster         a physical slot's xmin, or a walsender's hot_standby_feedback xmin (no database):
--                   every database's tables.
--   catalog         a logical slot with only catalog_xmin: it keeps catalog rows and WAL (wal_bytes),
--                   never a user table's dead rows.
-- Neither this session nor the one running its lent statements (`lent_to`, monitor/errand.py: the
-- background counter's, held for them: its own statements start once they are done) is listed:
-- both are the poll.
-- Ages are floored at 0: now() is this statement's start, and another session's transaction may have
-- begun after it (a 'backend' whose xact_start is later read -0.008 s: an age is never negative).
SELECT * FROM (
    SELECT 'backend' AS kind, a.pid::text AS name,
           greatest(age(a.backend_xmin), age(a.backend_xid)) AS xmin_age,
           greatest(0, extract(epoch FROM now() - a.xact_start))::float8 AS age_s,
           concat_ws(' ', a.usename || '@' || a.datname, nullif(a.application_name, ''), a.state) AS detail,
           a.application_name LIKE 'pgq-top%%' AS is_pgq_top,
           CASE WHEN a.datname IS NULL THEN 'cluster'
                WHEN a.datname = current_database() THEN 'database'
                ELSE 'other database' END AS scope,
           NULL::bigint AS wal_bytes
    FROM pg_stat_activity a
    WHERE (a.backend_xmin IS NOT NULL OR a.backend_xid IS NOT NULL) AND a.pid <> pg_backend_pid()
      AND a.pid IS DISTINCT FROM %(lent_to)s::int  -- the poll's own statements on another session
    UNION ALL
    SELECT 'prepared transaction', p.gid, age(p.transaction),
           greatest(0, extract(epoch FROM now() - p.prepared))::float8,
           p.owner::text || '@' || p.database::text, false,
           CASE WHEN p.database = current_database() THEN 'database' ELSE 'other database' END,
           NULL::bigint
    FROM pg_prepared_xacts p
    UNION ALL
    SELECT 'replication slot', r.slot_name::text, greatest(age(r.xmin), age(r.catalog_xmin)), NULL::float8,
           concat_ws(' ', r.slot_type, CASE WHEN r.active THEN 'active' ELSE 'inactive' END,
                     'xmin age ' || age(r.xmin), 'catalog_xmin age ' || age(r.catalog_xmin),
                     'wal ' || r.wal_status),
           false,
           CASE WHEN r.xmin IS NOT NULL THEN 'cluster' ELSE 'catalog' END,
           CASE WHEN pg_is_in_recovery() OR r.restart_lsn IS NULL THEN NULL
                ELSE pg_wal_lsn_diff(pg_current_wal_lsn(), r.restart_lsn)::bigint END
    FROM pg_replication_slots r
    WHERE r.xmin IS NOT NULL OR r.catalog_xmin IS NOT NULL
) h
ORDER BY h.xmin_age DESC, h.age_s DESC NULLS LAST
LIMIT %(rows)s
