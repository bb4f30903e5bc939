-- autovacuum_pacing.sql's vacuum_time_ms: the time vacuums of the table took (PostgreSQL 18+).
(coalesce(s.total_vacuum_time, 0) + coalesce(s.total_autovacuum_time, 0))::float8
