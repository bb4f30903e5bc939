-- Retry stalled jobs (guard_stalled.sql) the way procrastinate's documentation says to
-- (JobManager.retry_job on the jobs get_stalled_jobs returns): its own function
-- procrastinate_retry_job(job_id, retry_at => now()), which puts the job back to todo with attempts
-- + 1 (or fails it if an abort was requested). The chosen rows are locked first with the guard; the
-- function re-checks the status on the locked row.
{chosen}
SELECT c.id FROM chosen c
CROSS JOIN LATERAL {retry_job}(c.id, now(), NULL::int, NULL::varchar, NULL::varchar) AS r
