-- The job locks Que holds, read the way Que 2.4's own introspection reads them (Que.job_states,
-- lib/que/utils/introspection.rb): advisory locks in pg_locks whose key is (classid << 32) + objid,
-- the bigint Que's locker passes to pg_try_advisory_lock(id) (lib/que/locker.rb, lib/que/poller.rb),
-- held by a backend registered in que_lockers (joined by pid). pgq-top narrows Que's join to locks of
-- this database, granted, taken with one bigint key (objsubid 1: the two-int4 form has 2), and keeps
-- besides them the locks of a session Que named itself ('Que Locker: <backend pid>', the
-- application_name Locker sets) whose que_lockers row is missing: a Que locker, unregistered. Every
-- other advisory lock is another application's and never counts. The key being a que_jobs id is the
-- join of the statement that uses this. A backend's state is NULL to a role without pg_monitor: then
-- only an unregistered locker is stuck.
(SELECT (l.classid::bigint << 32) + l.objid::bigint AS id, l.pid, (k.pid IS NOT NULL) AS registered,
        k.ruby_hostname, k.ruby_pid, a.state AS backend_state, a.state_change,
        coalesce(k.pid IS NULL
                 OR (a.state = 'idle'
                     AND a.state_change < now() - make_interval(secs => {stuck_after_s}::float8)),
                 false) AS stuck
 FROM pg_locks l
 LEFT JOIN {ql} k ON k.pid = l.pid
 LEFT JOIN pg_stat_activity a ON a.pid = l.pid
 WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
   AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
   AND (k.pid IS NOT NULL OR a.application_name = 'Que Locker: ' || l.pid::text))
