-- The rows the search language reads (pgq_tui/search, SearchColumns.source): every queue table
-- q_<name> and its archive a_<name>, one row per message with its queue's name and the id pgq-top
-- gives it ("<queue>:<msg_id>"). Each table gives at most its newest %(w_scan)s messages by msg_id
-- (pgmq's primary key, a backward index scan; NULL: all of them), so a bounded search never reads a
-- whole table; %(w_ids)s (ids as text; NULL: any) narrows each table by its primary key, for a bulk
-- action's per-batch recheck.
-- @branch
(SELECT {qname}::text || ':' || m.msg_id AS id, {qname}::text AS queue, m.msg_id, m.read_ct,
        m.enqueued_at, m.vt, m.message, {headers_of_m}, NULL::timestamptz AS archived_at, false AS archived
 FROM {q} m
 WHERE %(w_ids)s::text[] IS NULL OR m.msg_id IN (
     SELECT substring(i FROM ':([0-9]+)$')::bigint FROM unnest(%(w_ids)s::text[]) i
     WHERE substring(i FROM '^(.*):[0-9]+$') = {qname})
 ORDER BY m.msg_id DESC LIMIT %(w_scan)s)
UNION ALL
(SELECT {qname}::text || ':' || m.msg_id, {qname}::text, m.msg_id, m.read_ct, m.enqueued_at, m.vt,
        m.message, {headers_of_m}, m.archived_at, true
 FROM {a} m
 WHERE %(w_ids)s::text[] IS NULL OR m.msg_id IN (
     SELECT substring(i FROM ':([0-9]+)$')::bigint FROM unnest(%(w_ids)s::text[]) i
     WHERE substring(i FROM '^(.*):[0-9]+$') = {qname})
 ORDER BY m.msg_id DESC LIMIT %(w_scan)s)
