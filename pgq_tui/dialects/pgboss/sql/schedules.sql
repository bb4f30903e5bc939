-- pg-boss's schedules (its `schedule` table: name, cron, timezone, data, options, created_on,
-- updated_on; 12.x adds key (primary key name + key), kind (cron or rrule) and last_job_id). The
-- optional columns are read through to_jsonb(s), so one statement serves every layout.
-- Last run: the newest occurrence pg-boss's cron pass forwarded (a job of its `__pgboss__send-it`
-- queue whose data names the schedule, created when the pass fired), or the job last_job_id names.
SELECT CASE WHEN coalesce(to_jsonb(s) ->> 'key', '') = '' THEN s.name
            ELSE s.name || ':' || (to_jsonb(s) ->> 'key') END AS name,
       CASE WHEN coalesce(to_jsonb(s) ->> 'kind', 'cron') = 'cron' THEN s.cron END AS expression,
       coalesce(s.timezone, 'UTC') AS timezone,
       s.name AS queue,
       greatest(sent.created_on, last_job.created_on) AS last_run,
       NULL::timestamptz AS next_run,
       s.created_on AS created_at,
       jsonb_build_object('key', to_jsonb(s) ->> 'key', 'kind', coalesce(to_jsonb(s) ->> 'kind', 'cron'),
                          'cron', s.cron, 'updated_on', s.updated_on, 'last_job_id', to_jsonb(s) ->> 'last_job_id',
                          'options', s.options) AS details
FROM {schedule} s
LEFT JOIN LATERAL (
    SELECT max(j.created_on) AS created_on
    FROM {job} j
    WHERE j.name = '__pgboss__send-it'
      AND j.data ->> 'name' = s.name
      AND coalesce(j.data ->> 'key', '') = coalesce(to_jsonb(s) ->> 'key', '')
) sent ON true
LEFT JOIN LATERAL (
    SELECT j.created_on FROM {job} j
    WHERE j.name = s.name AND j.id::text = to_jsonb(s) ->> 'last_job_id'
) last_job ON true
ORDER BY 1
