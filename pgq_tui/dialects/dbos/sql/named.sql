-- The application_name of every session connected to this database (pg_stat_activity shows it to
-- any role): an executor is connected by name when one equals its executor_id (DBOS names its
-- system-database sessions 'dbos_transact' unless the application sets its own connect_args).
ARRAY(SELECT a.application_name::text FROM pg_stat_activity a
      WHERE a.datname = current_database() AND a.application_name <> '')
