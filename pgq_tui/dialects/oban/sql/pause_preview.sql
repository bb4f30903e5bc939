-- Whether oban_jobs holds jobs of the queue (by Oban's (state, queue, ...) index, every state); its
-- paused state is unknown: Oban OSS keeps it in each node's memory (its Basic engine's producer meta).
SELECT EXISTS (SELECT 1 FROM {jobs} j
               WHERE j.state = ANY (enum_range(NULL::{state_type})) AND j.queue = %(queue)s) AS known,
       NULL::boolean AS paused
