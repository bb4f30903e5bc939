-- The claim-cost probe for pgq-top's own table: the candidate scan of jobtable.statements.CLAIM,
-- verbatim, with LIMIT 1 and no FOR UPDATE. Run under EXPLAIN (ANALYZE, BUFFERS) in a READ ONLY
-- transaction: it reads what a claim reads (the dead index entries and heap pages in front of the
-- first ready job) and locks no row, so a claim never waits for it.
SELECT id FROM {jobs}
    WHERE status = 'pending' AND queue = %(queue)s AND run_at <= now()
    ORDER BY priority DESC, run_at, id
    LIMIT 1
