-- A VACUUM of the jobs table in progress, or of any of its partitions (pg_partition_tree)
-- (PostgreSQL 17+: dead tuples are counted as item ids).
SELECT p.pid, p.phase, p.heap_blks_total, p.heap_blks_scanned, p.num_dead_item_ids AS dead_tuples
FROM pg_stat_progress_vacuum p
WHERE p.relid = %(jobs_oid)s::oid
   OR p.relid IN (SELECT relid FROM pg_partition_tree(%(jobs_oid)s::oid::regclass))
ORDER BY p.heap_blks_total DESC
