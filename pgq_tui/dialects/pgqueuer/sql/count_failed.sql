-- Dead jobs (failed: kept by entrypoints with on_failure="hold") per entrypoint, through the index
-- pgq-top advises, (entrypoint, id) WHERE status = 'failed'; each count stops at %(cap1)s rows.
WITH RECURSIVE ep AS (
    (SELECT entrypoint FROM {jobs} WHERE status = 'failed' ORDER BY entrypoint LIMIT 1)
    UNION ALL
    SELECT (SELECT j.entrypoint FROM {jobs} j WHERE j.status = 'failed' AND j.entrypoint > ep.entrypoint
            ORDER BY j.entrypoint LIMIT 1)
    FROM ep WHERE ep.entrypoint IS NOT NULL
)
SELECT ep.entrypoint AS queue,
       (SELECT count(*) FROM (SELECT 1 FROM {jobs} j WHERE j.status = 'failed'
            AND j.entrypoint = ep.entrypoint LIMIT %(cap1)s) f) AS dead
FROM ep WHERE ep.entrypoint IS NOT NULL
