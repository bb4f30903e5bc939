-- blocked.sql's wait_s before PostgreSQL 14 (no pg_locks.waitstart): timed from query_start.
greatest(0, extract(epoch FROM now() - a.query_start))::float8
