-- The jobs of each schedule's queue, newest first: pg-boss sends a schedule's jobs to the queue it
-- is named after and marks them no other way (12.x's last_job_id names the newest: 'exact').
SELECT q.schedule, j.id::text AS id,
       CASE WHEN j.state IN ('created', 'retry') AND j.start_after <= now() THEN 'ready'
            WHEN j.state IN ('created', 'retry') THEN 'scheduled'
            WHEN j.state = 'active' THEN 'running'
            WHEN j.state = 'failed' THEN 'dead'
            WHEN j.state = 'completed' THEN 'done'
            ELSE j.state::text END AS state,
       j.state::text AS native_state, j.created_on AS created_at, j.completed_on AS finished_at,
       CASE WHEN j.id::text = q.last_job_id THEN 'exact' ELSE 'queue' END AS link
FROM (
    SELECT CASE WHEN coalesce(to_jsonb(s) ->> 'key', '') = '' THEN s.name
                ELSE s.name || ':' || (to_jsonb(s) ->> 'key') END AS schedule,
           s.name, to_jsonb(s) ->> 'last_job_id' AS last_job_id
    FROM {schedule} s
) q
CROSS JOIN LATERAL (
    SELECT j.* FROM {job} j WHERE j.name = q.name ORDER BY j.created_on DESC LIMIT %(rows)s
) j
WHERE q.schedule = ANY(%(names)s::text[])
ORDER BY q.schedule, j.created_on DESC
