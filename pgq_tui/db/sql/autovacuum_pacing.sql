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
       extract(epoch FROM greatest(g.last_vacuum, g.last_autovacuum))::float8 AS vacuumed_at_epoch,
       greatest(g.last_vacuum, g.last_autovacuum) AS vacuumed_at,
       extract(epoch FROM now())::float8 AS now_epoch
FROM pg_class c
-- The three time settings in their base units (s, ms, ms). SHOW gives a value with its unit ('1min',
-- '2ms', '500us'), or bare in the base unit ('0', '-1'); pg_settings has them in base units but
-- builds every setting of the server at each read (0.5 ms a poll). The table's statistics come from
-- the functions pg_stat_user_tables is made of, for this one relation (the view aggregates them all).
CROSS JOIN LATERAL (
    SELECT CASE WHEN v.naptime ~ '^-?[0-9.]+$' THEN v.naptime::float8
                ELSE extract(epoch FROM v.naptime::interval)::float8 END AS naptime_s,
           CASE WHEN v.cost_delay ~ '^-?[0-9.]+$' THEN v.cost_delay::float8
                ELSE extract(epoch FROM v.cost_delay::interval)::float8 * 1000 END AS cost_delay_ms,
           CASE WHEN v.idle_tx ~ '^-?[0-9.]+$' THEN v.idle_tx::float8
                ELSE extract(epoch FROM v.idle_tx::interval)::float8 * 1000 END AS idle_tx_timeout_ms,
           pg_stat_get_last_vacuum_time(c.oid) AS last_vacuum,
           pg_stat_get_last_autovacuum_time(c.oid) AS last_autovacuum
    FROM (SELECT current_setting('autovacuum_naptime') AS naptime,
                 current_setting('autovacuum_vacuum_cost_delay') AS cost_delay,
                 current_setting('idle_in_transaction_session_timeout') AS idle_tx) v
) g
-- the table itself, or for a partitioned table the leaf partition with the most dead tuples (the
-- parent has no storage: autovacuum visits each partition with that partition's own settings)
WHERE c.oid = coalesce((SELECT t.relid FROM pg_partition_tree(%(jobs_oid)s::oid::regclass) t
                        WHERE t.isleaf
                        ORDER BY pg_stat_get_dead_tuples(t.relid) DESC, t.relid LIMIT 1),
                       %(jobs_oid)s::oid)
