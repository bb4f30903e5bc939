-- Retry dead jobs with Graphile Worker's own admin function reschedule_jobs(): run_at now, attempts 0
-- (max_attempts kept), on the chosen dead jobs, locked first with the guard (dead_ids.sql).
SELECT r.id FROM {reschedule_jobs}({dead_ids}, run_at => now(), attempts => 0) r
