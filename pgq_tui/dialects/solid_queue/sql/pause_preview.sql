-- Whether the queue has jobs (Solid Queue's Queue.all: distinct queue_name of solid_queue_jobs, by
-- index_solid_queue_jobs_for_filtering) and whether a pause row names it.
SELECT EXISTS (SELECT 1 FROM {jobs} j WHERE j.queue_name = %(queue)s) AS known,
       EXISTS (SELECT 1 FROM {pauses} p WHERE p.queue_name = %(queue)s) AS paused
