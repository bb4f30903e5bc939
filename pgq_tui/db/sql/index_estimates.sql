-- Size estimates of the jobs table and its indexes, for counts above the cap: the planner's own rule,
-- reltuples per page (from the last VACUUM/ANALYZE) times the relation's current page count.
SELECT c.relname::text AS name, c.reltuples::float8 AS reltuples, c.relpages::bigint AS relpages,
       (pg_relation_size(c.oid) / current_setting('block_size')::int)::bigint AS pages
FROM pg_class c
WHERE c.oid = %(jobs_oid)s::oid
   OR c.oid IN (SELECT i.indexrelid FROM pg_index i WHERE i.indrelid = %(jobs_oid)s::oid)
