-- New messages per queue since the previous poll (QueueModel.activity), from pgmq's own counters:
-- each queue table's msg_id sequence (pg_get_serial_sequence, pg_sequence_last_value: no table is
-- read), as pgmq.metrics() reads total_messages. pgmq's msg_ids are per queue, so the engine's
-- watermark (%(after)s, 'top') is the sum of the queues' sequence values, and each queue's own mark
-- travels in a 'gap' row: lo = its sequence's oid (stable across re-detection), hi = its value at
-- this poll, handed back by the engine at the next poll as %(lo)s/%(hi)s. A queue whose mark did not
-- come back (the first poll, more queues than %(gap_rows)s, the background count) shows no 'new'
-- row: the engine then sees ids it cannot place (the watermark moved more than the 'new' rows say)
-- and marks the rate approximate with that bound, never a made-up figure.
-- @outer
WITH seqs AS (
@branch@
), marks AS (
    SELECT g.lo AS seq, g.hi AS seen FROM unnest(%(lo)s::bigint[], %(hi)s::bigint[]) AS g(lo, hi)
)
SELECT 'new'::text AS kind, s.queue, (s.value - m.seen)::bigint AS n, NULL::bigint AS lo, NULL::bigint AS hi
FROM seqs s JOIN marks m ON m.seq = s.seq
WHERE %(after)s::bigint IS NOT NULL AND s.value > m.seen
UNION ALL
SELECT 'gap', NULL, NULL, s.seq, s.value
FROM (SELECT * FROM seqs ORDER BY seq LIMIT %(gap_rows)s) s
UNION ALL
SELECT 'top', NULL, (SELECT coalesce(sum(value), 0) FROM seqs)::bigint, NULL, NULL
-- @branch
SELECT {qname}::text AS queue, q.seq::oid::bigint AS seq,
       coalesce(pg_sequence_last_value(q.seq), 0)::bigint AS value
FROM (SELECT pg_get_serial_sequence({qreg}, 'msg_id')::regclass AS seq) q
