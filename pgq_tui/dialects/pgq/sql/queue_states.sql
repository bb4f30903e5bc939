-- Running (lease valid), expired (lease past) and failed jobs per queue, from the lease index
-- (queue, locked_until) WHERE status = 'running' and the dead index (queue, finished_at DESC NULLS LAST,
-- id DESC) WHERE status = 'failed'.
-- Distinct queues come from a recursive skip-scan over each index; counts stop at %(cap1)s rows.
-- running_queues, dead_queues: the shared skip-scan CTEs in running_queues.sql and dead_queues.sql
-- (statements.monitor_sql puts them in).
WITH RECURSIVE {running_queues}, {dead_queues}
SELECT run.queue,
       (SELECT count(*) FROM (SELECT 1 FROM {jobs} j WHERE j.status = 'running' AND j.queue = run.queue
            AND j.locked_until >= now() LIMIT %(cap1)s) r) AS running,
       (SELECT count(*) FROM (SELECT 1 FROM {jobs} j WHERE j.status = 'running' AND j.queue = run.queue
            AND j.locked_until < now() LIMIT %(cap1)s) e) AS expired,
       NULL::bigint AS failed
FROM run WHERE run.queue IS NOT NULL
UNION ALL
SELECT dead.queue, NULL, NULL,
       (SELECT count(*) FROM (SELECT 1 FROM {jobs} j WHERE j.status = 'failed' AND j.queue = dead.queue
            LIMIT %(cap1)s) f)
FROM dead WHERE dead.queue IS NOT NULL
