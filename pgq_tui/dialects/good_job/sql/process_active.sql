-- Process row p is alive by good_job 4.19's own GoodJob::Process.active scope: lock_type advisory (0)
-- and its session advisory lock on "<processes table>-<id>" held ({held}), or lock_type NULL and
-- updated_at within EXPIRED_INTERVAL (5 minutes; a process refreshes its row once it is
-- STALE_INTERVAL, 30 s, old).
((p.lock_type = 0
  AND ('x' || substr(md5({processes_name} || '-' || p.id::text), 1, 16))::bit(64)::bigint = ANY ({held}::bigint[]))
 OR (p.lock_type IS NULL AND p.updated_at > {utcnow} - interval '5 minutes'))
