-- What paces autovacuum on the jobs table, beyond table_health.sql: the launcher's naptime, the
-- worker pool and how many workers are busy on other tables, cost throttling, the table's own
-- reloptions, and the time vacuums of this table took (vacuum_time_ms.sql: NULL before PostgreSQL 18).
SELECT g.naptime_s,
       current_setting('autovacuum_max_workers')::int AS max_workers,
       (SELECT count(*) FROM pg_stat_activity a
        WHERE a.backend_type = 'autovacuum worker'
          AND NOT EXISTS (SELECT 1 FROM pg_stat_progress_vacuum p
                          WHERE p.pid = a.pid
                            AND (p.relid = %(jobs_oid)s::oid OR p.relid IN
                                 (SELECT relid FROM pg_partition_tree(%(jobs_oid)s::oid::regclass)))
                            AND p.datname = current_database()))::int AS workers_elsewhere,
       current_setting('autovacuum_vacuum_cost_limit')::int AS av_cost_limit,
       current_setting('vacuum_cost_limit')::int AS vacuum_cost_limit,
       g.cost_delay_ms,
       g.idle_tx_timeout_ms,
       coalesce(c.reloptions, '{{}}'::text[]) AS reloptions,
       {vacuum_time_ms} AS vacuum_time_ms,
       extract(epoch FROM greatest(s.last_vacuum, s.last_autovacuum))::float8 AS vacuumed_at_epoch,
       greatest(s.last_vacuum, s.last_autovacuum) AS vacuumed_at,
       extract(epoch FROM now())::float8 AS now_epoch
FROM pg_class c
LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
-- pg_settings is built whole at each read: read it once for the three settings, in their base units
CROSS JOIN (SELECT max(setting::float8) FILTER (WHERE name = 'autovacuum_naptime') AS naptime_s,
                   max(setting::float8) FILTER (WHERE name = 'autovacuum_vacuum_cost_delay') AS cost_delay_ms,
                   max(setting::float8) FILTER (WHERE name = 'idle_in_transaction_session_timeout')
                       AS idle_tx_timeout_ms
            FROM pg_settings
            WHERE name IN ('autovacuum_naptime', 'autovacuum_vacuum_cost_delay',
                           'idle_in_transaction_session_timeout')) g
-- the table itself, or for a partitioned table the leaf partition with the most dead tuples (the
-- parent has no storage: autovacuum visits each partition with that partition's own settings)
WHERE c.oid = coalesce((SELECT t.relid FROM pg_partition_tree(%(jobs_oid)s::oid::regclass) t
                        LEFT JOIN pg_stat_user_tables d ON d.relid = t.relid
                        WHERE t.isleaf
                        ORDER BY coalesce(d.n_dead_tup, 0) DESC, t.relid LIMIT 1),
                       %(jobs_oid)s::oid)
