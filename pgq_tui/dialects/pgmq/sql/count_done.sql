-- Done: archived messages (pgmq.archive() moves a message to a_<name>), per archive table {a}, each
-- count stopping at %(cap1)s rows, in the order of pgmq's own index archived_at_idx_<name>.
-- @branch
SELECT {qname}::text AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {a} m ORDER BY m.archived_at DESC LIMIT %(cap1)s) x)::bigint
           AS done
