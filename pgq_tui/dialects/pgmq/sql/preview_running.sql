-- Messages in flight among the chosen ones (requeue's guard). pgmq cannot tell whether a consumer
-- still works on one: alive is 0 by lack of knowledge, and the plan says so.
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
 WHERE m.vt > now() AND m.read_ct > 0 AND m.read_ct < {dead_reads}
   AND (%(queue)s::text IS NULL OR {qname}::text = %(queue)s::text)
   AND (%(ids)s::text[] IS NULL OR m.msg_id IN (SELECT i.msg_id FROM ids i WHERE i.queue = {qname})))
