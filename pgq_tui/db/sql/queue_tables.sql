-- A queue kept in several alike tables (pgmq: one q_<name> per queue; QueueModel.sized_together):
-- each table's size in pages and its dead tuples, partitions included. The tier of the scans that
-- read them all is picked from their total (monitor/tiers.py), and table health shows the worst one
-- (most dead tuples, then the biggest). Sizes as check_table.sql reads them: relpages scaled to the
-- rows the statistics count now, read without a lock.
SELECT r.name, r.oid::bigint AS oid,
       sum(CASE WHEN c.relpages > 0 AND c.reltuples > 0
                THEN greatest(c.relpages, ceil(c.relpages / c.reltuples * s.n))
                ELSE greatest(c.relpages, ceil(s.n / 20.0)) END)::bigint AS pages,
       sum(s.dead)::bigint AS dead_tuples
FROM (SELECT name, to_regclass(name) AS oid FROM unnest(%(relations)s::text[]) AS u(name)) r
CROSS JOIN LATERAL (SELECT relid FROM pg_partition_tree(r.oid) UNION SELECT r.oid) t(relid)
JOIN pg_class c ON c.oid = t.relid
CROSS JOIN LATERAL (SELECT pg_stat_get_dead_tuples(c.oid) AS dead,
                           pg_stat_get_live_tuples(c.oid) + pg_stat_get_dead_tuples(c.oid) AS n) s
WHERE r.oid IS NOT NULL
GROUP BY r.name, r.oid
ORDER BY r.name
