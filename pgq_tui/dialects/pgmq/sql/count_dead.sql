-- Dead by pgq-top's rule (pgmq has no dead state): read_ct >= {dead_reads}, per queue table {q},
-- through an index leading with read_ct (pgmq creates none: see the dialect's index advice); each
-- count stops at %(cap1)s rows.
-- @branch
SELECT {qname}::text AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {q} m WHERE m.read_ct >= {dead_reads}
                              LIMIT %(cap1)s) x)::bigint AS dead
