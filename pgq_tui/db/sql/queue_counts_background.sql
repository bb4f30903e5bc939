-- The background exact count (monitor/background.py): its own connection, its own statement_timeout.
-- One statement, so every count, max(id) and the new ids come from one snapshot, true as of now().
-- Branches run only when asked for (%(pending)s etc. are one-time filters that skip the scan), and
-- only when some count passed the per-poll cap: this reads every row of the states it counts.
-- "new": rows per queue with ids above the previous background count's max(id), for completion
-- rates of queues too deep to count every poll (completed = new - change in depth).
SELECT now() AS as_of, x.field, x.queue, x.n::bigint AS n
FROM (
    SELECT 'max_id' AS field, NULL::text AS queue, coalesce(max(j.id), 0) AS n FROM {jobs} j
    UNION ALL
    SELECT CASE WHEN j.run_at <= now() THEN 'ready' ELSE 'scheduled' END, j.queue, count(*)
    FROM {jobs} j WHERE j.status = 'pending' AND %(pending)s GROUP BY 1, 2
    UNION ALL
    SELECT CASE WHEN j.locked_until < now() THEN 'expired' ELSE 'running' END, j.queue, count(*)
    FROM {jobs} j WHERE j.status = 'running' AND %(running)s GROUP BY 1, 2
    UNION ALL
    SELECT 'failed', j.queue, count(*) FROM {jobs} j WHERE j.status = 'failed' AND %(failed)s GROUP BY 2
    UNION ALL
    SELECT 'done', j.queue, count(*) FROM {jobs} j WHERE j.status = 'done' AND %(done)s GROUP BY 2
    UNION ALL
    SELECT 'new', j.queue, count(*) FROM {jobs} j
    WHERE j.id > %(after)s AND j.id <= (SELECT max(m.id) FROM {jobs} m) GROUP BY 2
) x
