-- Discard dead messages (read_ct >= {dead_reads}, pgq-top's rule): archive them, the transition
-- pgmq.archive(queue, msg_ids) makes (delete from q_<name>, insert the same row into a_<name>, which
-- stamps archived_at). Guard, re-checked on each locked row: read_ct >= {dead_reads}. Reversible with retry.
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
 WHERE m.read_ct >= {dead_reads}
   AND (%(queue)s::text IS NULL OR {qname}::text = %(queue)s::text)
   AND (%(ids)s::text[] IS NULL OR m.msg_id IN (SELECT i.msg_id FROM ids i WHERE i.queue = {qname}))
 ORDER BY m.msg_id LIMIT %(batch)s)
-- @cte
{c} AS (
    SELECT m.msg_id FROM {q} m
    WHERE m.msg_id IN (SELECT p.msg_id FROM picked p WHERE p.queue = {qname}) AND m.read_ct >= {dead_reads}
    FOR UPDATE SKIP LOCKED
), {d} AS (
    DELETE FROM {q} m USING {c} c
    WHERE m.msg_id = c.msg_id AND m.read_ct >= {dead_reads}
    RETURNING m.msg_id, m.vt, m.read_ct, m.enqueued_at, {moved}
), {w} AS (
    INSERT INTO {a} (msg_id, vt, read_ct, enqueued_at, {moved_columns})
    SELECT msg_id, vt, read_ct, enqueued_at, {moved_columns} FROM {d}
    RETURNING {qname}::text || ':' || msg_id AS id
)
-- @result
SELECT id FROM {w}
