-- pg-boss 11 and 12: active jobs, the longest stuck first, then the soonest to be stuck, at most
-- %(rows)s stuck and %(rows)s others (each list capped on its own). pg-boss records no worker for a
-- job, so the holder is NULL and its liveness unknown; from schema 30 (12.12), where the job was
-- sent with heartbeatSeconds, its worker refreshes heartbeat_on, so the holder is alive while that
-- is fresher than heartbeat_seconds and gone after (pg-boss's failJobsByHeartbeat rule). expires_at
-- is the timeout (started_on + expire_seconds), or the heartbeat deadline if earlier. Two phases:
-- every active job's key and expiry (job_i14's active range at schema 46, else a scan: O(active
-- jobs), the expiry is computed) and the chosen ones (chosen_active.sql), then only the chosen
-- rows, by pg-boss's primary key (name, id), one LATERAL probe per chosen row (see the 10.x
-- leases.sql for why).
WITH {chosen_active}
SELECT {lease_row}
FROM chosen c
CROSS JOIN LATERAL (SELECT * FROM {job} j WHERE j.name = c.name AND j.id = c.id AND j.state = 'active'
                    LIMIT 1) j
ORDER BY c.expires_at, c.id
