-- Does the queue's main table exist, can we read it, which columns has it, how big is it? Run with `server` in the
-- first round trip of every poll (a table dropped or a grant revoked since the last poll says so).
-- Names arrive as parameters and are quoted server-side by format().
SELECT j.oid::bigint AS oid,
       j.oid IS NOT NULL AND has_table_privilege(j.oid, 'SELECT') AS can_select,
       ARRAY(SELECT a.attname::text FROM pg_attribute a
             WHERE a.attrelid = j.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
       current_user::text AS role,
       -- its size in pages with every partition under it (monitor/tiers.py: where scans run), read
       -- without a lock (pg_relation_size would wait behind an ACCESS EXCLUSIVE lock): relpages as of
       -- the last vacuum/analyze, scaled to the rows the statistics count now (live + dead); before
       -- the first analyze, those rows at a conservative 20 per page
       (WITH RECURSIVE tree(rel) AS (
            SELECT j.oid UNION ALL SELECT i.inhrelid FROM pg_inherits i JOIN tree t ON i.inhparent = t.rel)
        SELECT sum(CASE WHEN c.relpages > 0 AND c.reltuples > 0
                        THEN greatest(c.relpages, ceil(c.relpages / c.reltuples * s.n))
                        ELSE greatest(c.relpages, ceil(s.n / 20.0)) END)::bigint
        FROM tree JOIN pg_class c ON c.oid = tree.rel,
             LATERAL (SELECT pg_stat_get_live_tuples(c.oid) + pg_stat_get_dead_tuples(c.oid) AS n) s) AS pages
FROM (SELECT to_regclass(format('%%I.%%I', %(schema)s::text, %(table)s::text)) AS oid) j
