-- The claim-cost probe (monitor/probe.py): River's own fetch (JobGetAvailable) picks available, due
-- rows of one queue by priority, scheduled_at, id with FOR UPDATE SKIP LOCKED; this is that candidate
-- scan with LIMIT 1 and no locking clause, through river_job_prioritized_fetching_index.
SELECT j.id FROM {jobs} j
WHERE j.state = 'available' AND j.queue = %(queue)s AND j.scheduled_at <= now()
ORDER BY j.priority, j.scheduled_at, j.id
LIMIT 1
