-- autovacuum_pacing.sql's vacuum_time_ms before PostgreSQL 18: unknown (total_*vacuum_time is new in 18).
NULL::float8
