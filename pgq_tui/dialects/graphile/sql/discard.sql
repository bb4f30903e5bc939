-- Discard dead jobs with Graphile Worker's own admin function complete_jobs(), which deletes them, on
-- the chosen dead jobs, locked first with the guard (dead_ids.sql).
SELECT r.id FROM {complete_jobs}({dead_ids}) r
