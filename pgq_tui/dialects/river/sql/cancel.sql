-- River's own JobCancel on waiting jobs (guard_waiting.sql): state cancelled, finalized_at now(),
-- metadata cancel_attempted_at (the time, as River's Go client writes it), and the same NOTIFY on
-- `<schema>.river_control` (JSON: action "cancel", job_id, queue). River's guard is "not cancelled,
-- completed or discarded, finalized_at null"; pgq-top also leaves running jobs alone: a running job's
-- cancel is delivered to its worker by River's client, which pgq-top is not.
{chosen}, notified AS MATERIALIZED (
    SELECT c.id, pg_notify({control_channel},
                           json_build_object('action', 'cancel', 'job_id', c.id, 'queue', j.queue)::text)
    FROM chosen c JOIN {jobs} j ON j.id = c.id
)
UPDATE {jobs} j
SET state = 'cancelled',
    finalized_at = now(),
    metadata = jsonb_set(j.metadata, '{{cancel_attempted_at}}'::text[],
                         to_jsonb(to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')), true)
FROM notified n
WHERE j.id = n.id AND ({guard})
RETURNING j.id
