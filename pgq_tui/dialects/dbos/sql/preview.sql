-- An action's preview: how many workflows its guard admits now (admitted.sql) and, of them, how many
-- are PENDING on an executor connected by name (liveness.sql), with up to 5 such executors.
SELECT count(*) AS eligible,
       count(*) FILTER (WHERE j.status = 'PENDING' AND ({liveness}) = 'alive') AS alive,
       (array_agg(DISTINCT j.executor_id) FILTER (WHERE j.status = 'PENDING' AND ({liveness}) = 'alive'))[1:5]
           AS holders
FROM {ws} j
WHERE {admitted}
