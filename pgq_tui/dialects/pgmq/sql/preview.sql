-- An action's preview (compose.preview): how many of the chosen messages its guard admits (guard, a
-- condition on the queue table's row m: sql/guard_<what>.sql), and for a retry (archived true) the
-- archived messages chosen by id; for the others that branch is constant false. pgmq cannot tell
-- whether a consumer still works on a message: alive is 0 by lack of knowledge, and the plan says so.
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
 WHERE ({guard})
   AND (%(queue)s::text IS NULL OR {qname}::text = %(queue)s::text)
   AND (%(ids)s::text[] IS NULL OR m.msg_id IN (SELECT i.msg_id FROM ids i WHERE i.queue = {qname})))
UNION ALL
(SELECT count(*) FROM {a} m
 WHERE {archived} AND %(ids)s::text[] IS NOT NULL
   AND (%(queue)s::text IS NULL OR {qname}::text = %(queue)s::text)
   AND m.msg_id IN (SELECT i.msg_id FROM ids i WHERE i.queue = {qname}))
