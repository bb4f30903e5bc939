-- Some DBOS executor is connected to this database: a session named {dbos_app}, the
-- application_name DBOS 3.4 sets on every system-database connection of a launched application
-- (dbos/_dbos_config.py, configure_db_engine_parameters; its DBOSClient's are
-- 'dbos_transact_client', which do not run workflows and do not count).
EXISTS (SELECT 1 FROM pg_stat_activity a
        WHERE a.datname = current_database() AND a.application_name = {dbos_app})
