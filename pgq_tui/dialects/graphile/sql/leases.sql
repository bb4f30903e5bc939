-- Locked jobs, oldest lock first (so the stuck ones lead), at most %(rows)s stuck and %(rows)s others:
-- each list capped on its own, each a range of the advised index (task_id, locked_at) WHERE
-- locked_at IS NOT NULL per task (`s`: the stuck range, before the 4-hour expiry, and the rest).
-- Graphile records the pool id (locked_by) but nothing ties it to a session, so liveness is unknown;
-- expires_at is the 4-hour lock expiry.
SELECT l.id, l.queue, l.holder, 'unknown' AS liveness, NULL::int AS holder_pid,
       l.attempts, l.max_attempts, l.started_at, l.expires_at,
       extract(epoch FROM l.expires_at - now())::float8 AS seconds_left,
       l.expires_at < now() AS stuck, l.payload_preview
FROM (VALUES ('-infinity'::timestamptz, now() - interval '4 hours'),
             (now() - interval '4 hours', 'infinity'::timestamptz)) s(lo, hi)
CROSS JOIN LATERAL (
    SELECT l.* FROM {tasks} t
    CROSS JOIN LATERAL (
        SELECT j.id, t.identifier AS queue, j.locked_by AS holder, j.attempts::int AS attempts,
               j.max_attempts::int AS max_attempts, j.locked_at AS started_at,
               j.locked_at + interval '4 hours' AS expires_at,
               CASE WHEN pg_column_size(j.payload) <= 65536 THEN left(j.payload::text, 200) END
                   AS payload_preview
        FROM {jobs} j
        WHERE j.task_id = t.id AND j.locked_at >= s.lo AND j.locked_at < s.hi
        ORDER BY j.locked_at LIMIT %(rows)s
    ) l
    ORDER BY l.started_at, l.id
    LIMIT %(rows)s
) l
ORDER BY l.started_at, l.id
