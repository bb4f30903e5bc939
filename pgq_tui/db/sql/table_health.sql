-- Health of the jobs table: statistics counters, sizes, and what autovacuum will do. Reloptions are
-- returned raw (text[]) and merged over the server settings by the caller. The settings' *_max_*
-- variant exists from PostgreSQL 18 (NULL before).
-- One row per relation that has storage: the table itself, or, for a partitioned table (pg-boss 10's
-- job, a user's partitioned table), each leaf partition, recursively (pg_partition_tree), after the
-- parent's own row(s), which the caller ignores when there are partitions. The caller
-- sums them and names the worst partition; the partitioned parent itself holds no rows.
SELECT n.nspname::text AS rel_schema, c.relname::text AS rel_name, t.level, t.isleaf,
       c.reltuples::float8 AS reltuples,
       coalesce(s.n_live_tup, 0) AS live_tuples, coalesce(s.n_dead_tup, 0) AS dead_tuples,
       pg_table_size(c.oid) AS table_bytes, pg_indexes_size(c.oid) AS index_bytes,
       s.last_vacuum, s.last_autovacuum, s.last_analyze, s.last_autoanalyze,
       coalesce(s.vacuum_count, 0) AS vacuum_count, coalesce(s.autovacuum_count, 0) AS autovacuum_count,
       coalesce(s.n_tup_ins, 0) AS n_tup_ins, coalesce(s.n_tup_upd, 0) AS n_tup_upd,
       coalesce(s.n_tup_del, 0) AS n_tup_del, coalesce(s.n_tup_hot_upd, 0) AS n_tup_hot_upd,
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
LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
WHERE t.isleaf OR t.level = 0  -- the parent alone when it has no partition yet
ORDER BY t.level, c.oid
