-- Job row j holds good_job's session advisory lock (the default :advisory lock strategy, and :hybrid):
-- good_job 4.19 AdvisoryLockable, key "<table>-<id>" hashed by advisory_lock_bigint_sql (md5, the
-- default hash_function: ('x' || substr(md5(key), 1, 16))::bit(64)::bigint), matched in pg_locks as
-- its joins_advisory_locks does (locktype 'advisory', objsubid 1, classid = the upper 32 bits, objid =
-- the lower 32 bits: {held}). Stricter than good_job: granted, in this database, by another session
-- (an action's own transaction lock is not a worker's). Another application's advisory lock never
-- has this key, so it never counts.
('x' || substr(md5({jobs_name} || '-' || j.id::text), 1, 16))::bit(64)::bigint = ANY ({held}::bigint[])
