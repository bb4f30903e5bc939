-- Messages in flight (read_ct > 0, vt > now(), read_ct below the dead rule), soonest visible again
-- first, at most %(rows)s over all queues: per queue the first %(rows)s in vt order (pgmq's vt index).
-- pgmq records no consumer: holder NULL, liveness unknown. expires_at is vt, when pgmq makes the
-- message visible again by itself (never stuck: pgmq has no stuck state).
-- @outer
SELECT l.id, l.queue, NULL::text AS holder, 'unknown'::text AS liveness, NULL::int AS holder_pid,
       l.attempts, NULL::int AS max_attempts, l.started_at, l.expires_at,
       extract(epoch FROM l.expires_at - now())::float8 AS seconds_left, false AS stuck, l.payload_preview
FROM (
@branch@
) l
ORDER BY l.expires_at, l.queue, l.id
LIMIT %(rows)s
-- @branch
(SELECT {qname}::text || ':' || m.msg_id AS id, {qname}::text AS queue, m.read_ct AS attempts,
        {last_read_at} AS started_at, m.vt AS expires_at,
        CASE WHEN pg_column_size(m.message) <= 65536 THEN left(m.message::text, 200) END AS payload_preview
 FROM {q} m WHERE m.vt > now() AND m.read_ct > 0 AND m.read_ct < {dead_reads}
 ORDER BY m.vt LIMIT %(rows)s)
