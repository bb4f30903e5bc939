-- pgqueuer's schedules (<table>_schedules: id, expression, entrypoint, heartbeat, created, updated,
-- next_run, last_run, status). pgqueuer computes next_run itself (croniter, UTC) and runs the
-- entrypoint's function in its scheduler: a schedule makes no job row.
SELECT s.entrypoint || ' (' || s.expression || ')' AS name, s.expression, 'UTC' AS timezone,
       s.entrypoint AS queue, s.last_run, s.next_run, s.created AS created_at,
       jsonb_build_object('id', s.id, 'status', s.status::text, 'heartbeat', s.heartbeat,
                          'updated', s.updated) AS details
FROM {schedules} s
ORDER BY s.entrypoint, s.expression
