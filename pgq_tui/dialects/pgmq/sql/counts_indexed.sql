-- Per-queue counts through the index pgq-top advises on each queue table, (read_ct, vt): one exact
-- range of it per read_ct value below the dead rule (a few, {dead_reads} at most), each count
-- stopping at %(cap1)s rows of that queue, index-only once the table is vacuumed: the cost is flat in
-- the queue's size and in how its messages split between visible, delayed and in flight (each
-- ORDER BY read_ct, vt is that index's order, so no plan walks pgmq's vt index instead).
--   ready     read_ct < {dead_reads} and vt <= now(); oldest_ready_age_s = now() - the smallest such
--             vt (when it became visible), through pgmq's own index q_<name>_vt_idx;
--   scheduled read_ct = 0 and vt > now() (sent with a delay);
--   running   0 < read_ct < {dead_reads} and vt > now() (in flight);
--   dead      read_ct >= {dead_reads} (pgq-top's rule; pgmq has no dead state).
-- @branch
SELECT {qname}::text AS queue,
       (SELECT count(*) FROM (
            SELECT 1 FROM generate_series(0, {dead_reads} - 1) r(n)
            CROSS JOIN LATERAL (SELECT 1 FROM {q} m WHERE m.read_ct = r.n AND m.vt <= now()
                                ORDER BY m.read_ct, m.vt LIMIT %(cap1)s) x
            LIMIT %(cap1)s) x)::bigint AS ready,
       (SELECT count(*) FROM (SELECT 1 FROM {q} m WHERE m.read_ct = 0 AND m.vt > now()
                              ORDER BY m.read_ct, m.vt LIMIT %(cap1)s) x)::bigint AS scheduled,
       (SELECT count(*) FROM (
            SELECT 1 FROM generate_series(1, {dead_reads} - 1) r(n)
            CROSS JOIN LATERAL (SELECT 1 FROM {q} m WHERE m.read_ct = r.n AND m.vt > now()
                                ORDER BY m.read_ct, m.vt LIMIT %(cap1)s) x
            LIMIT %(cap1)s) x)::bigint AS running,
       (SELECT count(*) FROM (SELECT 1 FROM {q} m WHERE m.read_ct >= {dead_reads}
                              ORDER BY m.read_ct, m.vt LIMIT %(cap1)s) x)::bigint AS dead,
       (SELECT extract(epoch FROM now() - o.vt)::float8
        FROM (SELECT m.vt FROM {q} m WHERE m.vt <= now() AND m.read_ct < {dead_reads}
              ORDER BY m.vt LIMIT 1) o) AS oldest_ready_age_s
