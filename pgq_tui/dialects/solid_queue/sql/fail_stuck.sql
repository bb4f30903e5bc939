-- What Solid Queue 1.x's own supervisor does with the claims of a dead process (Process#prune, then
-- ClaimedExecution.fail_all_with; at boot, fail_orphaned_executions for claims whose process row is
-- gone), on the chosen stuck claims: each job gets a failed execution with the error Solid Queue
-- writes (SolidQueue::Processes::ProcessPrunedError, or ProcessMissingError when the process row is
-- gone), and its claim is deleted. Retry it from the dead jobs, as with Solid Queue's own failures.
-- Stuck: the claiming process's heartbeat is {alive_threshold_s} s old or more, or its row is gone.
-- The claim rows are locked, then the process rows (SKIP LOCKED, as prune's non_blocking_lock), and
-- the heartbeat is re-checked on the locked row: a process that heartbeat meanwhile is left alone.
-- Not done here: releasing a concurrency-limited job's semaphore at once (its limit lives in the Ruby
-- job class); Solid Queue's concurrency maintenance releases it when it expires. The process row is
-- left for the supervisor's next prune, which finds no claims left to fail.
WITH candidates AS MATERIALIZED (
    SELECT c.id AS claim_id, c.job_id, c.process_id
    FROM {claimed} c
    JOIN {jobs} j ON j.id = c.job_id
    WHERE (%(ids)s::bigint[] IS NULL OR c.job_id = ANY(%(ids)s::bigint[]))
      AND (%(queue)s::text IS NULL OR j.queue_name = %(queue)s::text)
      AND NOT EXISTS (SELECT 1 FROM {processes} p WHERE p.id = c.process_id
                        AND p.last_heartbeat_at > (now() AT TIME ZONE 'UTC')
                                                  - make_interval(secs => {alive_threshold_s}))
    ORDER BY c.job_id LIMIT %(batch)s
    FOR UPDATE OF c SKIP LOCKED
), pruned AS MATERIALIZED (
    SELECT p.id, p.last_heartbeat_at
    FROM {processes} p
    WHERE p.id IN (SELECT process_id FROM candidates)
      AND p.last_heartbeat_at <= (now() AT TIME ZONE 'UTC') - make_interval(secs => {alive_threshold_s})
    FOR UPDATE SKIP LOCKED
), chosen AS MATERIALIZED (
    SELECT c.claim_id, c.job_id,
           CASE WHEN p.id IS NULL THEN 'SolidQueue::Processes::ProcessMissingError'
                ELSE 'SolidQueue::Processes::ProcessPrunedError' END AS exception_class,
           CASE WHEN p.id IS NULL THEN 'The process that was running this job no longer exists'
                ELSE 'Process was found dead and pruned (last heartbeat at: '
                     || to_char(p.last_heartbeat_at, 'YYYY-MM-DD HH24:MI:SS') || ' UTC)' END AS message
    FROM candidates c
    LEFT JOIN pruned p ON p.id = c.process_id
    WHERE p.id IS NOT NULL
       OR NOT EXISTS (SELECT 1 FROM {processes} q WHERE q.id = c.process_id)
), failed AS (
    -- Job#failed_with: a failed execution, or its error replaced when one exists already
    INSERT INTO {failed} (job_id, error, created_at)
    SELECT job_id,
           json_build_object('exception_class', exception_class, 'message', message, 'backtrace', NULL)::text,
           now() AT TIME ZONE 'UTC'
    FROM chosen
    ON CONFLICT (job_id) DO UPDATE SET error = EXCLUDED.error
    RETURNING job_id
)
DELETE FROM {claimed} cl
USING chosen c
WHERE cl.id = c.claim_id
RETURNING cl.job_id AS id
