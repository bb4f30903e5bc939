-- The size in pages of the relations a statement would scan without an index (QueueModel.finished_scans),
-- partitions included (pg_partition_tree, recursively): the engine runs such a scan in the poll only
-- while they are small. pg_relation_size, not relpages: a table never vacuumed or analyzed says 0 there.
SELECT coalesce(sum(pg_relation_size(t.relid) / current_setting('block_size')::int), 0)::bigint AS pages
FROM unnest(%(relations)s::text[]) AS r(name)
CROSS JOIN LATERAL (SELECT relid FROM pg_partition_tree(to_regclass(r.name))
                    UNION SELECT to_regclass(r.name)) AS t(relid)
WHERE t.relid IS NOT NULL
