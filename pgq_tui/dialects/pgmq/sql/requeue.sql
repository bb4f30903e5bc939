-- Requeue messages in flight: make them visible now, the transition pgmq.set_vt(queue, msg_id, 0)
-- makes (vt = now(), the transaction's start, so visible at once; read_ct kept). Guard, re-checked
-- on each locked row: in flight (read_ct > 0 AND vt > now()) and below the dead rule. pgmq ties no consumer to a message: one that
-- is still working on it will find its delete() or archive() still works, and the message may run twice.
-- Ids are `<queue>:<msg_id>`; at most %(batch)s messages over all queues per statement.
-- @outer
WITH ids AS (
    SELECT substring(i FROM '^(.*):[0-9]+$') AS queue, substring(i FROM ':([0-9]+)$')::bigint AS msg_id
    FROM unnest(%(ids)s::text[]) i
), picked AS (
    SELECT p.queue, p.msg_id FROM (
@branch@
    ) p ORDER BY p.queue, p.msg_id LIMIT %(batch)s
),
@cte@
@result@
-- @branch
(SELECT {qname}::text AS queue, m.msg_id FROM {q} m
 WHERE m.vt > now() AND m.read_ct > 0 AND m.read_ct < {dead_reads}
   AND (%(queue)s::text IS NULL OR {qname}::text = %(queue)s::text)
   AND (%(ids)s::text[] IS NULL OR m.msg_id IN (SELECT i.msg_id FROM ids i WHERE i.queue = {qname}))
 ORDER BY m.msg_id LIMIT %(batch)s)
-- @cte
{c} AS (
    SELECT m.msg_id FROM {q} m
    WHERE m.msg_id IN (SELECT p.msg_id FROM picked p WHERE p.queue = {qname})
      AND m.vt > now() AND m.read_ct > 0 AND m.read_ct < {dead_reads}
    FOR UPDATE SKIP LOCKED
), {w} AS (
    UPDATE {q} m SET vt = now() FROM {c} c
    WHERE m.msg_id = c.msg_id AND m.vt > now() AND m.read_ct > 0 AND m.read_ct < {dead_reads}
    RETURNING {qname}::text || ':' || m.msg_id AS id
)
-- @result
SELECT id FROM {w}
