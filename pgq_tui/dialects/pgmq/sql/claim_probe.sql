-- The claim-cost probe (monitor/probe.py): pgmq.read()'s candidate scan for queue %(queue)s, on
-- its table only (the other branches are cut by their constant test): vt <= clock_timestamp()
-- ORDER BY msg_id LIMIT 1, without its FOR UPDATE SKIP LOCKED.
-- @outer
SELECT c.id FROM (
@branch@
) c
LIMIT 1
-- @branch
(SELECT m.msg_id AS id FROM {q} m
 WHERE {qname}::text = %(queue)s::text AND m.vt <= clock_timestamp()
 ORDER BY m.msg_id LIMIT 1)
