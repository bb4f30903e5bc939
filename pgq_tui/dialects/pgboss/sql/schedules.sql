-- pg-boss's schedules (its `schedule` table: name, cron, timezone, data, options, created_on,
-- updated_on; 12.x adds key (primary key name + key), kind (cron or rrule) and last_job_id). The
-- optional columns are read through to_jsonb(s), so one statement serves every layout.
-- Last run: the newest occurrence pg-boss's cron pass forwarded (a job of its `__pgboss__send-it`
-- queue whose data names the schedule, created when the pass fired), or the job last_job_id names.
-- Only the newest 10,000 forwarded occurrences are read (12.x's job_i15 (name, created_on) serves
-- them; before it, a sort of the send-it queue): a schedule with none among them has its last run
-- from last_job_id (12.x), else none.
WITH sent AS MATERIALIZED (
    SELECT x.data ->> 'name' AS name, coalesce(x.data ->> 'key', '') AS key, max(x.created_on) AS created_on
    FROM (
        SELECT j.data, j.created_on FROM {job} j
        WHERE j.name = '__pgboss__send-it'
        ORDER BY j.created_on DESC
        LIMIT 10000
    ) x
    GROUP BY 1, 2
)
SELECT CASE WHEN coalesce(to_jsonb(s) ->> 'key', '') = '' THEN s.name
            ELSE s.name || ':' || (to_jsonb(s) ->> 'key') END AS name,
       s.cron AS expression,  -- a 12.x `rrule` row holds an RFC 5545 rule here, read as such
       coalesce(s.timezone, 'UTC') AS timezone,
       s.name AS queue,
       greatest(sent.created_on, last_job.created_on) AS last_run,
       NULL::timestamptz AS next_run,
       s.created_on AS created_at,
       jsonb_build_object('key', to_jsonb(s) ->> 'key', 'kind', coalesce(to_jsonb(s) ->> 'kind', 'cron'),
                          'cron', s.cron, 'updated_on', s.updated_on, 'last_job_id', to_jsonb(s) ->> 'last_job_id',
                          'options', s.options) AS details
FROM {schedule} s
LEFT JOIN sent ON sent.name = s.name AND sent.key = coalesce(to_jsonb(s) ->> 'key', '')
LEFT JOIN LATERAL (
    SELECT j.created_on FROM {job} j
    WHERE j.name = s.name AND j.id = (to_jsonb(s) ->> 'last_job_id')::uuid
) last_job ON true
ORDER BY 1
