-- autovacuum_pacing.sql's vacuum_time_ms: the time vacuums of the table took (PostgreSQL 18+).
(pg_stat_get_total_vacuum_time(c.oid) + pg_stat_get_total_autovacuum_time(c.oid))::float8
