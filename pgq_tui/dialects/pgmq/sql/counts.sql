-- Per-queue counts through pgmq's own index only, q_<name>_vt_idx (vt), for a queue table without
-- the (read_ct, vt) index pgq-top advises (counts_indexed.sql is the statement with it). One branch
-- per queue table {q} (pgmq.q_<name>) found at detection, each count stopping at %(cap1)s matches:
--   ready     vt <= now() and read_ct below pgq-top's dead rule, in the order of pgmq's own index
--             q_<name>_vt_idx (vt); oldest_ready_age_s = now() - the smallest such vt (when it became
--             visible), one index probe;
--   scheduled read_ct = 0 and vt > now() (sent with a delay), walked from the far end of the vt index
--             (delays usually reach further than visibility timeouts);
--   running   read_ct > 0, vt > now() and read_ct below the dead rule (in flight), from the near end;
-- each filter on read_ct is checked on the heap rows the vt index points to, so a count walks past
-- the rows of the other states on its side of now() (running past the delayed messages that expire
-- sooner, scheduled past the in-flight ones that expire later; ready past the dead visible ones):
-- its cost grows with those, not with the queue's size. Dead is not counted here (no index).
-- @branch
SELECT {qname}::text AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {q} m WHERE m.vt <= now() AND m.read_ct < {dead_reads}
                              ORDER BY m.vt LIMIT %(cap1)s) x)::bigint AS ready,
       (SELECT count(*) FROM (SELECT 1 FROM {q} m WHERE m.vt > now() AND m.read_ct = 0
                              ORDER BY m.vt DESC LIMIT %(cap1)s) x)::bigint AS scheduled,
       (SELECT count(*) FROM (SELECT 1 FROM {q} m WHERE m.vt > now() AND m.read_ct > 0
                                AND m.read_ct < {dead_reads} ORDER BY m.vt LIMIT %(cap1)s) x)::bigint AS running,
       (SELECT extract(epoch FROM now() - o.vt)::float8
        FROM (SELECT m.vt FROM {q} m WHERE m.vt <= now() AND m.read_ct < {dead_reads}
              ORDER BY m.vt LIMIT 1) o) AS oldest_ready_age_s
