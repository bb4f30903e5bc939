-- Executing jobs, stuck first, at most %(rows)s stuck and %(rows)s others (each list capped on its
-- own), through Oban's state index. Oban keeps node liveness outside the database, so liveness is
-- unknown; the holder is attempted_by (node, producer uuid). Stuck by Lifeline's rule: attempted_at
-- older than {rescue_after_s} s (UTC timestamps).
WITH leases AS (
    SELECT r.id, r.queue, r.holder, 'unknown' AS liveness, NULL::int AS holder_pid, r.attempts,
           r.max_attempts, r.started_at, r.expires_at,
           extract(epoch FROM r.expires_at - now())::float8 AS seconds_left,
           coalesce(r.expires_at < now(), true) AS stuck, r.payload_preview
    FROM (
        SELECT j.id, j.queue, array_to_string(j.attempted_by, ' ') AS holder,
               j.attempt AS attempts, j.max_attempts, j.attempted_at AT TIME ZONE 'UTC' AS started_at,
               (j.attempted_at AT TIME ZONE 'UTC') + make_interval(secs => {rescue_after_s}) AS expires_at,
               CASE WHEN pg_column_size(j.args) <= 65536 THEN left(j.worker || ' ' || j.args::text, 200) END
                   AS payload_preview
        FROM {jobs} j
        WHERE j.state = 'executing'
    ) r
)
(SELECT * FROM leases WHERE stuck IS TRUE ORDER BY expires_at NULLS FIRST, id LIMIT %(rows)s)
UNION ALL
(SELECT * FROM leases WHERE stuck IS NOT TRUE ORDER BY expires_at NULLS FIRST, id LIMIT %(rows)s)
ORDER BY stuck DESC, expires_at NULLS FIRST, id
