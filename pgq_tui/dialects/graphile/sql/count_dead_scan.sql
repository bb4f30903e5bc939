-- Dead jobs per task (unlocked, attempts >= max_attempts) when no index serves them (Graphile
-- Worker's stock schema): one scan, exact (cap1 is not used); in the poll while the table is small,
-- else in the background counter (monitor/tiers.py). The advised index makes it live (count_dead.sql).
SELECT t.identifier AS queue, count(*) AS dead
FROM {jobs} j
JOIN {tasks} t ON t.id = j.task_id
WHERE j.locked_at IS NULL AND j.attempts >= j.max_attempts
GROUP BY t.identifier
