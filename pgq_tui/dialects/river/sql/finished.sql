-- Jobs completed and discarded (failed for good) per queue in [%(since)s, %(until)s), from River's
-- finalized_at (set in the same statement as the final state, whoever writes): done/s and failed/s.
-- Served by River's own river_job_state_and_finalized_at_index (state, finalized_at).
SELECT j.queue,
       count(*) FILTER (WHERE j.state = 'completed') AS completed,
       count(*) FILTER (WHERE j.state = 'discarded') AS failed
FROM {jobs} j
WHERE j.state IN ('completed', 'discarded')
  AND j.finalized_at >= %(since)s::timestamptz AND j.finalized_at < %(until)s::timestamptz
GROUP BY j.queue
