-- Running and stuck jobs per task when no index serves locked jobs (Graphile Worker's stock schema):
-- one scan of the jobs table, exact (cap1 is not used). The engine runs it in the poll while the table
-- is small, else in its background counter (monitor/tiers.py). Stuck is Graphile Worker's own rule: a
-- lock older than 4 hours has expired. The index pgq-top advises, (task_id, locked_at) WHERE locked_at
-- IS NOT NULL, makes the figure live (count_locked.sql).
SELECT t.identifier AS queue,
       count(*) FILTER (WHERE j.locked_at >= now() - interval '4 hours') AS running,
       count(*) FILTER (WHERE j.locked_at < now() - interval '4 hours') AS stuck
FROM {jobs} j
JOIN {tasks} t ON t.id = j.task_id
WHERE j.locked_at IS NOT NULL
GROUP BY t.identifier
