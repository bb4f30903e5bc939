-- Client backends in the whole cluster (max_connections is cluster-wide).
SELECT count(*) AS total FROM pg_stat_activity WHERE backend_type = 'client backend'
