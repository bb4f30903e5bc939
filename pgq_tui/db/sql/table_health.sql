-- Health of the jobs table: statistics counters, sizes, and what autovacuum will do. Reloptions are
-- returned raw (text[]) and merged over the server settings by the caller. The settings' *_max_*
-- variant exists from PostgreSQL 18 (NULL before).
-- One row per relation that has storage: the table itself, or, for a partitioned table (pg-boss 10's
-- job, a user's partitioned table), each leaf partition, recursively (pg_partition_tree), after the
-- parent's own row(s), which the caller ignores when there are partitions. The caller
-- sums them and names the worst partition; the partitioned parent itself holds no rows.
-- The statistics are read by the functions pg_stat_user_tables is made of, for these relations only:
-- the view aggregates every table of the database first (0.3-0.5 ms a poll at a few hundred).
SELECT n.nspname::text AS rel_schema, c.relname::text AS rel_name, t.level, t.isleaf,
       c.reltuples::float8 AS reltuples,
       pg_stat_get_live_tuples(c.oid) AS live_tuples, pg_stat_get_dead_tuples(c.oid) AS dead_tuples,
       pg_table_size(c.oid) AS table_bytes, pg_indexes_size(c.oid) AS index_bytes,
       pg_stat_get_last_vacuum_time(c.oid) AS last_vacuum,
       pg_stat_get_last_autovacuum_time(c.oid) AS last_autovacuum,
       pg_stat_get_last_analyze_time(c.oid) AS last_analyze,
       pg_stat_get_last_autoanalyze_time(c.oid) AS last_autoanalyze,
       pg_stat_get_vacuum_count(c.oid) AS vacuum_count, pg_stat_get_autovacuum_count(c.oid) AS autovacuum_count,
       pg_stat_get_tuples_inserted(c.oid) AS n_tup_ins, pg_stat_get_tuples_updated(c.oid) AS n_tup_upd,
       pg_stat_get_tuples_deleted(c.oid) AS n_tup_del, pg_stat_get_tuples_hot_updated(c.oid) AS n_tup_hot_upd,
       coalesce(c.reloptions, '{{}}'::text[]) AS reloptions,
       current_setting('autovacuum') AS autovacuum,
       current_setting('track_counts') AS track_counts,
       current_setting('autovacuum_vacuum_threshold') AS vacuum_threshold,
       current_setting('autovacuum_vacuum_scale_factor') AS vacuum_scale_factor,
       current_setting('autovacuum_vacuum_max_threshold', true) AS vacuum_max_threshold
FROM (SELECT relid, level, isleaf FROM pg_partition_tree(%(jobs_oid)s::oid::regclass)
      UNION  -- a plain table is in no partition tree: itself
      SELECT %(jobs_oid)s::oid::regclass, 0, true) t
JOIN pg_class c ON c.oid = t.relid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE t.isleaf OR t.level = 0  -- the parent alone when it has no partition yet
ORDER BY t.level, c.oid
