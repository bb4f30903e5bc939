-- Active jobs, the longest expired first, at most %(rows)s expired and %(rows)s others (each list
-- capped on its own, each a range of the index below), per queue and in total. pg-boss records no
-- worker for a job, so the holder is unknown; expires_at is started_on + expire_in, its timeout.
-- Two phases keep heap reads at %(rows)s however many queues there are: the chosen jobs' keys from the
-- advised index alone, (name, expire_in, started_on) INCLUDE (id) WHERE state = 'active' (per queue
-- and expire_in value, from the recursive skip-scan active_expiry.sql, oldest first: the soonest to
-- expire of that value), then only those rows, by pg-boss's primary key (name, id). The second phase
-- is a LATERAL lookup with LIMIT 1, so it stays one primary-key probe per chosen row: as a plain join,
-- the monitor's generic plan (the LIMIT a parameter, estimated at a tenth of the rows) hashed every
-- active job instead (50,000 rows, 44,000 buffers, 190 ms at 5M rows, against 0.6 ms).
WITH RECURSIVE {active_expiry}, chosen AS (
    (SELECT a.name, a.id, a.expires_at  -- expired: started before now() - expire_in
     FROM e
     CROSS JOIN LATERAL (
         SELECT j.name, j.id, j.started_on + j.expire_in AS expires_at
         FROM {job} j
         WHERE j.name = e.name AND j.state = 'active' AND j.expire_in = e.expire_in
           AND j.started_on < now() - e.expire_in
         ORDER BY j.started_on LIMIT %(rows)s
     ) a
     WHERE e.expire_in IS NOT NULL
     ORDER BY a.expires_at, a.id
     LIMIT %(rows)s)
    UNION ALL
    (SELECT a.name, a.id, a.expires_at  -- the others: the soonest to expire first
     FROM e
     CROSS JOIN LATERAL (
         SELECT j.name, j.id, j.started_on + j.expire_in AS expires_at
         FROM {job} j
         WHERE j.name = e.name AND j.state = 'active' AND j.expire_in = e.expire_in
           AND j.started_on >= now() - e.expire_in
         ORDER BY j.started_on LIMIT %(rows)s
     ) a
     WHERE e.expire_in IS NOT NULL
     ORDER BY a.expires_at, a.id
     LIMIT %(rows)s)
)
SELECT {lease_row}
FROM chosen c
CROSS JOIN LATERAL (SELECT * FROM {job} j WHERE j.name = c.name AND j.id = c.id AND j.state = 'active'
                    LIMIT 1) j
ORDER BY c.expires_at, c.id
