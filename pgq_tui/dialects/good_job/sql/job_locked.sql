-- Job row j holds good_job's session advisory lock (the default :advisory lock strategy, and :hybrid):
-- good_job 4.19 AdvisoryLockable, key "<table>-<id>" hashed by advisory_lock_bigint_sql (md5, the
-- default hash_function: ('x' || substr(md5(key), 1, 16))::bit(64)::bigint), matched in pg_locks as
-- its joins_advisory_locks does (locktype 'advisory', objsubid 1, classid = the upper 32 bits, objid =
-- the lower 32 bits). Stricter than good_job: granted, in this database, by another session (an
-- action's own transaction lock is not a worker's). Another application's
-- advisory lock never has this key, so it never counts.
EXISTS (SELECT 1 FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted AND l.pid <> pg_backend_pid()
          AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
          AND l.classid = substring((('x' || substr(md5({jobs_name} || '-' || j.id::text), 1, 16))::bit(64)::bigint)::bit(64) from 1 for 32)::bit(32)::int
          AND l.objid = substring((('x' || substr(md5({jobs_name} || '-' || j.id::text), 1, 16))::bit(64)::bigint)::bit(64) from 33 for 32)::bit(32)::int)
