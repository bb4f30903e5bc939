-- Solid Queue's own ClaimedExecution#release (what a process does with its claims when it stops),
-- on the chosen stuck claims: the job is dispatched again as a ready execution with its queue_name
-- and priority (bypassing concurrency limits, as release does), and the claim is deleted. Stuck:
-- the claiming process's heartbeat is {alive_threshold_s} s old or more, or its row is gone; the
-- claim rows are locked and the rule re-checked, so a claim whose process came back is left alone.
WITH chosen AS MATERIALIZED (
    SELECT c.id AS claim_id, j.id, j.queue_name, j.priority
    FROM {claimed} c
    JOIN {jobs} j ON j.id = c.job_id
    WHERE (%(ids)s::bigint[] IS NULL OR c.job_id = ANY(%(ids)s::bigint[]))
      AND (%(queue)s::text IS NULL OR j.queue_name = %(queue)s::text)
      AND NOT EXISTS (SELECT 1 FROM {processes} p WHERE p.id = c.process_id
                        AND p.last_heartbeat_at > (now() AT TIME ZONE 'UTC')
                                                  - make_interval(secs => {alive_threshold_s}))
    ORDER BY c.job_id LIMIT %(batch)s
    FOR UPDATE OF c SKIP LOCKED
), ready AS (
    INSERT INTO {ready} (job_id, queue_name, priority, created_at)
    SELECT c.id, c.queue_name, c.priority, now() AT TIME ZONE 'UTC' FROM chosen c
    RETURNING job_id
)
DELETE FROM {claimed} cl
USING chosen c
WHERE cl.id = c.claim_id
RETURNING cl.job_id AS id
