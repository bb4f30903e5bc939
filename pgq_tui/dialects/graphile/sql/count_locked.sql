-- Running and stuck jobs per task. Stuck is Graphile Worker's own rule: a lock older than 4 hours has
-- expired (its pools clear such locks every 8-10 minutes). Read from the index pgq-top advises,
-- (task_id, locked_at) WHERE locked_at IS NOT NULL; each count stops at %(cap1)s rows per task.
SELECT t.identifier AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {jobs} j
            WHERE j.locked_at IS NOT NULL AND j.task_id = t.id AND j.locked_at >= now() - interval '4 hours'
            LIMIT %(cap1)s) r) AS running,
       (SELECT count(*) FROM (SELECT 1 FROM {jobs} j
            WHERE j.locked_at IS NOT NULL AND j.task_id = t.id AND j.locked_at < now() - interval '4 hours'
            LIMIT %(cap1)s) s) AS stuck
FROM {tasks} t
