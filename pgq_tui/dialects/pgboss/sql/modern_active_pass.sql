-- pg-boss 11 and 12 where job_i14 (or the operator's like index) serves the active rows: running and
-- stuck per queue (modern_count_active) and the lease list (modern_leases) by ONE walk of each queue's
-- active range, for the poll (contract.Pass). That range is mostly dead entries until autovacuum comes
-- (each job's move to completed leaves one), each a heap visit: the list's walk read all of it anyway
-- (its order is the expiry, computed from the row), so the count reads it once with the list instead
-- of once more on its own. Part 0: a count row per queue as jsonb, each count at most %(cap1)s (what
-- the capped count would read); part 1: the lease rows, as modern_leases.sql reads them.
WITH {chosen_active}
SELECT 1 AS pgq_part, NULL::jsonb AS pgq_counts,
       {lease_row}
FROM chosen c
CROSS JOIN LATERAL (SELECT * FROM {job} j WHERE j.name = c.name AND j.id = c.id AND j.state = 'active'
                    LIMIT 1) j
UNION ALL
-- stuck: past the timeout, or (30+) the heartbeat deadline, which least() above takes when earlier
SELECT 0, jsonb_build_object(
           'queue', q.name,
           'running', least(count(a.id) FILTER (WHERE NOT a.expires_at < now()), %(cap1)s::bigint),
           'stuck', least(count(a.id) FILTER (WHERE a.expires_at < now()), %(cap1)s::bigint)),
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM {queue} q
LEFT JOIN active a ON a.name = q.name
WHERE q.name NOT LIKE '\_\_pgboss\_\_%%'
GROUP BY q.name
ORDER BY 1 DESC, expires_at, id
