-- Dead jobs per task: unlocked with attempts >= max_attempts (Graphile keeps them). Read from the
-- index pgq-top advises, (task_id, updated_at) WHERE locked_at IS NULL AND attempts >= max_attempts;
-- each count stops at %(cap1)s rows per task.
SELECT t.identifier AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {jobs} j
            WHERE j.locked_at IS NULL AND j.attempts >= j.max_attempts AND j.task_id = t.id
            LIMIT %(cap1)s) d) AS dead
FROM {tasks} t
