-- An action's preview (dialects/guarded.py): how many of the chosen jobs its guard admits now
-- (admitted.sql). The dialects composed this way record no liveness of a job's holder: none is alive.
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {jobs} j
WHERE {admitted}
