-- pg-boss 11 and 12 where job_i16 (name, completed_on) WHERE completed_on IS NOT NULL serves it (12.38's
-- own, or the operator's like index): each queue's completed jobs of the last hour, newest first, by
-- one walk of that queue's range of job_i16, at most %(newest)s over the number of queues (at least
-- {least}) of each queue (the template judges `whole` per queue: latency_statement's per_queue). What it
-- reads grows with the jobs finished in the hour, at most the greater of %(newest)s and {least} per
-- queue in all: never with the jobs the table keeps, as the scan of latency_finished.sql does.
SELECT f.queue, f.finished_at, f.wait_s, f.run_s, q.name::text AS grp, k.cap
FROM (SELECT greatest({least}, %(newest)s / greatest(count(*), 1))::bigint AS cap FROM {queue}) k
CROSS JOIN {queue} q
CROSS JOIN LATERAL (
    SELECT j.name AS queue, j.completed_on AS finished_at,
           extract(epoch FROM j.started_on - j.start_after)::float8 AS wait_s,
           extract(epoch FROM j.completed_on - j.started_on)::float8 AS run_s
    FROM {job} j
    WHERE j.name = q.name AND j.completed_on >= now() - interval '1 hour' AND j.state = 'completed'
    ORDER BY j.completed_on DESC
    -- k.cap again: a LIMIT may not name the outer query's columns (one InitPlan, run once)
    LIMIT (SELECT greatest({least}, %(newest)s / greatest(count(*), 1)) FROM {queue})
) f
