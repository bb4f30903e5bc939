-- Dead (read_ct >= {dead_reads}, pgq-top's rule) messages, and archived ones only when chosen by id.
-- @outer
WITH ids AS (
    SELECT substring(i FROM '^(.*):[0-9]+$') AS queue, substring(i FROM ':([0-9]+)$')::bigint AS msg_id
    FROM unnest(%(ids)s::text[]) i
)
SELECT coalesce(sum(n), 0)::bigint AS eligible, 0::bigint AS alive FROM (
@branch@
) p
-- @branch
(SELECT count(*) AS n FROM {q} m
 WHERE m.read_ct >= {dead_reads}
   AND (%(queue)s::text IS NULL OR {qname}::text = %(queue)s::text)
   AND (%(ids)s::text[] IS NULL OR m.msg_id IN (SELECT i.msg_id FROM ids i WHERE i.queue = {qname})))
UNION ALL
(SELECT count(*) FROM {a} m
 WHERE (%(queue)s::text IS NULL OR {qname}::text = %(queue)s::text)
   AND %(ids)s::text[] IS NOT NULL
   AND m.msg_id IN (SELECT i.msg_id FROM ids i WHERE i.queue = {qname}))
