-- A PENDING workflow's executor: alive when a session of this database is named after its
-- executor_id, gone when no DBOS executor is connected at all, else unknown (some DBOS executor
-- is connected, and DBOS's sessions do not say which).
CASE WHEN coalesce(j.executor_id, '') = ANY ({named}) THEN 'alive'
     WHEN NOT {dbos_up} THEN 'gone'
     ELSE 'unknown' END
