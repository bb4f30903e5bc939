-- Dead by pgq-top's rule (read_ct >= {dead_reads}), most read first, at most %(rows)s over all queues,
-- through the advised read_ct index of each queue table. pgmq keeps no error text.
-- @outer
SELECT d.id, d.queue, d.attempts, NULL::int AS max_attempts, d.finished_at, NULL::text AS error,
       d.payload_preview
FROM (
@branch@
) d
ORDER BY d.attempts DESC, d.queue, d.id
LIMIT %(rows)s
-- @branch
(SELECT {qname}::text || ':' || m.msg_id AS id, {qname}::text AS queue, m.read_ct AS attempts,
        {last_read_at} AS finished_at,
        CASE WHEN pg_column_size(m.message) <= 65536 THEN left(m.message::text, 200) END AS payload_preview
 FROM {q} m WHERE m.read_ct >= {dead_reads}
 ORDER BY m.read_ct DESC LIMIT %(rows)s)
