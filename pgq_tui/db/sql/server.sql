-- Who and where we are; now() is the reference clock for every age in the Snapshot.
SELECT now() AS now,
       split_part(current_setting('server_version'), ' ', 1) AS version,
       current_setting('server_version_num')::int AS version_num,
       current_database()::text AS database,
       pg_is_in_recovery() AS in_recovery,
       pg_backend_pid() AS pid
