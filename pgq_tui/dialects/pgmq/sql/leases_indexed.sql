-- Messages in flight (0 < read_ct < {dead_reads}, vt > now()), soonest visible again first, at most
-- %(rows)s over all queues: per queue and read_ct value the first %(rows)s ids of the advised index
-- (read_ct, vt) INCLUDE (msg_id), an exact index-only range each (never the delayed messages), then
-- only those rows by primary key, the guard repeated. pgmq records no consumer: holder
-- NULL, liveness unknown. expires_at is vt, when pgmq makes the message visible again by itself
-- (never stuck: pgmq has no stuck state).
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
 FROM (SELECT c.msg_id, c.vt
       FROM generate_series(1, {dead_reads} - 1) r(n)
       CROSS JOIN LATERAL (SELECT m.msg_id, m.vt FROM {q} m WHERE m.read_ct = r.n AND m.vt > now()
                           ORDER BY m.vt LIMIT %(rows)s) c
       ORDER BY c.vt LIMIT %(rows)s) p
 CROSS JOIN LATERAL (SELECT * FROM {q} m WHERE m.msg_id = p.msg_id AND m.read_ct > 0
                     AND m.read_ct < {dead_reads} AND m.vt > now() LIMIT 1) m
 ORDER BY m.vt LIMIT %(rows)s)
