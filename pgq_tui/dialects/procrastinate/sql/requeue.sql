-- Retry stalled jobs the way procrastinate's documentation says to (JobManager.retry_job on the jobs
-- get_stalled_jobs returns): its own function procrastinate_retry_job(job_id, retry_at => now()),
-- which puts the job back to todo with attempts + 1 (or fails it if an abort was requested). The
-- chosen rows are locked first with the guard: doing, worker gone or heartbeat older than
-- {stalled_after_s} s; the function re-checks the status on the locked row.
WITH chosen AS MATERIALIZED (
    SELECT j.id FROM {jobs} j
    WHERE j.status = 'doing'
      AND (j.worker_id IS NULL OR NOT EXISTS (
              SELECT 1 FROM {workers} w WHERE w.id = j.worker_id
                AND w.last_heartbeat >= now() - make_interval(secs => {stalled_after_s})))
      AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
      AND (%(queue)s::text IS NULL OR j.queue_name = %(queue)s::text)
    ORDER BY j.id LIMIT %(batch)s
    FOR UPDATE OF j SKIP LOCKED
)
SELECT c.id FROM chosen c
CROSS JOIN LATERAL {retry_job}(c.id, now(), NULL::int, NULL::varchar, NULL::varchar) AS r
