-- pgq-top's stuck rule for DBOS (DBOS has no heartbeat and no process table): a PENDING workflow
-- whose executor is not connected. Connected by name: a session in this database whose
-- application_name is the workflow's executor_id ({named}). Not connected: no such session and no
-- session of any DBOS executor ({dbos_up}); or, when the user sets dbos_stuck_after, no such
-- session and updated_at older than that many seconds ({stuck_after_ms} ms; 0 = unset).
j.status = 'PENDING'
AND coalesce(j.executor_id, '') <> ALL ({named})
AND (NOT {dbos_up}
     OR ({stuck_after_ms}::bigint > 0
         AND j.updated_at < (extract(epoch FROM now()) * 1000)::bigint - {stuck_after_ms}::bigint))
