-- Every single-key advisory lock other sessions hold in this database, as the 64-bit key it was
-- taken with (pg_locks' classid the upper 32 bits, objid the lower, objsubid 1: the one-bigint form
-- good_job uses; the two-int form is objsubid 2 and never matches). Uncorrelated: read once per
-- statement (an InitPlan), whatever the number of jobs judged.
(SELECT coalesce(array_agg((l.classid::bigint << 32) | l.objid::bigint), ARRAY[]::bigint[]) FROM pg_locks l
 WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted AND l.pid <> pg_backend_pid()
   AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database()))
