-- Retry failed jobs (guard_failed.sql) with procrastinate's own function procrastinate_retry_job(
-- job_id, retry_at => now()): back to todo, attempts + 1. The chosen rows are locked first with the
-- guard; the function re-checks the status on the locked row.
{chosen}
SELECT c.id FROM chosen c
CROSS JOIN LATERAL {retry_job}(c.id, now(), NULL::int, NULL::varchar, NULL::varchar) AS r
