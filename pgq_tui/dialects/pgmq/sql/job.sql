-- One message in full, by pgq-top's id `<queue>:<msg_id>` (msg_id is unique within its queue only):
-- from the queue table by primary key, else from the archive by primary key.
-- @outer
WITH wanted AS (
    SELECT substring(%(id)s::text FROM '^(.*):[0-9]+$') AS queue,
           substring(%(id)s::text FROM ':([0-9]+)$')::bigint AS msg_id
)
SELECT j.id, j.queue, j.state, j.native_state, j.attempts, NULL::int AS max_attempts, j.run_at,
       j.created_at, j.started_at, j.finished_at, NULL::text AS holder, NULL::text AS error, j.payload,
       j.details
FROM (
@branch@
) j
LIMIT 1
-- @branch
(SELECT {qname}::text || ':' || m.msg_id AS id, {qname}::text AS queue,
        CASE WHEN m.read_ct >= {dead_reads} THEN 'dead'
             WHEN m.vt <= now() THEN 'ready'
             WHEN m.read_ct = 0 THEN 'scheduled' ELSE 'running' END AS state,
        CASE WHEN m.vt <= now() THEN 'visible'
             WHEN m.read_ct = 0 THEN 'delayed' ELSE 'in flight' END AS native_state,
        m.read_ct AS attempts, m.vt AS run_at, m.enqueued_at AS created_at, {last_read_at} AS started_at,
        NULL::timestamptz AS finished_at, m.message::text AS payload,
        jsonb_build_object('table', {qtext}, 'msg_id', m.msg_id, 'vt', m.vt, 'read_ct', m.read_ct,
                           'headers', {headers}, 'dead_rule', 'read_ct >= ' || {dead_reads}
                           || ' (pgq-top''s rule: pgmq has no dead state)') AS details
 FROM {q} m, wanted w WHERE w.queue = {qname} AND m.msg_id = w.msg_id)
UNION ALL
(SELECT {qname}::text || ':' || m.msg_id, {qname}::text, 'done', 'archived', m.read_ct, m.vt,
        m.enqueued_at, {last_read_at}, m.archived_at, m.message::text,
        jsonb_build_object('table', {atext}, 'msg_id', m.msg_id, 'vt', m.vt, 'read_ct', m.read_ct,
                           'headers', {headers}, 'archived_at', m.archived_at)
 FROM {a} m, wanted w WHERE w.queue = {qname} AND m.msg_id = w.msg_id)
