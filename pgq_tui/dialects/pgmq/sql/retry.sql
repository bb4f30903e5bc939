-- Retry dead (read_ct >= {dead_reads}, pgq-top's rule) or archived messages: pgmq has no unarchive,
-- so this is what a user does with its functions, in one transaction: send a copy (pgmq.send's
-- insert: a new msg_id from the queue's sequence, read_ct 0, visible now, same message and headers)
-- and delete the original from q_<name> or a_<name>. Guards, re-checked on each locked row: read_ct
-- >= {dead_reads} in the queue table; present in the archive. Returns the originals' ids.
-- With %(ids)s NULL it takes every dead message (of %(queue)s when given), never an archived one:
-- archived usually means processed, so those come back only when chosen by id.
-- @outer
WITH ids AS (
    SELECT substring(i FROM '^(.*):[0-9]+$') AS queue, substring(i FROM ':([0-9]+)$')::bigint AS msg_id
    FROM unnest(%(ids)s::text[]) i
), picked AS (
    SELECT p.queue, p.msg_id, p.archived FROM (
@branch@
    ) p ORDER BY p.archived, p.queue, p.msg_id LIMIT %(batch)s
),
@cte@
@result@
-- @branch
(SELECT {qname}::text AS queue, m.msg_id, false AS archived FROM {q} m
 WHERE m.read_ct >= {dead_reads}
   AND (%(queue)s::text IS NULL OR {qname}::text = %(queue)s::text)
   AND (%(ids)s::text[] IS NULL OR m.msg_id IN (SELECT i.msg_id FROM ids i WHERE i.queue = {qname}))
 ORDER BY m.msg_id LIMIT %(batch)s)
UNION ALL
(SELECT {qname}::text, m.msg_id, true FROM {a} m
 WHERE (%(queue)s::text IS NULL OR {qname}::text = %(queue)s::text)
   AND %(ids)s::text[] IS NOT NULL
   AND m.msg_id IN (SELECT i.msg_id FROM ids i WHERE i.queue = {qname})
 ORDER BY m.msg_id LIMIT %(batch)s)
-- @cte
{c} AS (
    SELECT m.msg_id FROM {q} m
    WHERE m.msg_id IN (SELECT p.msg_id FROM picked p WHERE p.queue = {qname} AND NOT p.archived)
      AND m.read_ct >= {dead_reads}
    FOR UPDATE SKIP LOCKED
), {d} AS (
    DELETE FROM {q} m USING {c} c
    WHERE m.msg_id = c.msg_id AND m.read_ct >= {dead_reads}
    RETURNING m.msg_id, m.message, {headers_of_m}
), {ca} AS (
    SELECT m.msg_id FROM {a} m
    WHERE m.msg_id IN (SELECT p.msg_id FROM picked p WHERE p.queue = {qname} AND p.archived)
    FOR UPDATE SKIP LOCKED
), {da} AS (
    DELETE FROM {a} m USING {ca} c
    WHERE m.msg_id = c.msg_id
    RETURNING m.msg_id, m.message, {headers_of_m}
), {w} AS (
    INSERT INTO {q} (vt, message{headers_column})
    SELECT now(), r.message{headers_of_r}
    FROM (SELECT * FROM {d} UNION ALL SELECT * FROM {da}) r
)
-- @result
SELECT {qname}::text || ':' || msg_id AS id FROM {d}
UNION ALL
SELECT {qname}::text || ':' || msg_id FROM {da}
