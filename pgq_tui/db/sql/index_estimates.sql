-- Size estimates of the partial indexes, for counts above the cap: the planner's own rule,
-- reltuples per page (from the last VACUUM/ANALYZE) times the index's current page count.
SELECT c.relname::text AS name, c.reltuples::float8 AS reltuples, c.relpages::bigint AS relpages,
       (pg_relation_size(c.oid) / current_setting('block_size')::int)::bigint AS pages
FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = %(jobs_oid)s::oid AND c.relname = ANY(%(indexes)s::text[])
