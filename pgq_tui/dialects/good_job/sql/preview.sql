-- An action's preview: how many jobs its guard admits now (admitted.sql); none of them is held by a
-- live worker (the guard refuses those).
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {gj} j
WHERE {admitted}
