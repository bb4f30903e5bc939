-- blocked.sql's wait_s, PostgreSQL 14+: the wait's start comes from pg_locks.waitstart.
(SELECT greatest(0, extract(epoch FROM now() - min(l.waitstart)))::float8
 FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted)
