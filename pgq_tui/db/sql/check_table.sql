-- Does the queue's main table exist, can we read it, which columns has it, how big is it? Run with `server` in the
-- first round trip of every poll (a table dropped or a grant revoked since the last poll says so).
-- Names arrive as parameters and are quoted server-side by format().
SELECT j.oid::bigint AS oid,
       j.oid IS NOT NULL AND has_table_privilege(j.oid, 'SELECT') AS can_select,
       ARRAY(SELECT a.attname::text FROM pg_attribute a
             WHERE a.attrelid = j.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
       current_user::text AS role,
       -- its size in pages with every partition under it (monitor/tiers.py: where scans run); the size
       -- on disk, not relpages, which stays 0 on a table filled and never vacuumed
       (WITH RECURSIVE tree(rel) AS (
            SELECT j.oid UNION ALL SELECT i.inhrelid FROM pg_inherits i JOIN tree t ON i.inhparent = t.rel)
        SELECT sum(pg_relation_size(rel))::bigint / current_setting('block_size')::bigint FROM tree) AS pages
FROM (SELECT to_regclass(format('%%I.%%I', %(schema)s::text, %(table)s::text)) AS oid) j
