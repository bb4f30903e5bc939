-- The lock-and-filter step of a guarded transition: the jobs the action admits (admitted.sql), at
-- most %(batch)s, oldest first, row-locked, skipping those a good_job worker is claiming (FOR NO KEY
-- UPDATE SKIP LOCKED, its skip-locked claim). The transition re-checks the guard on each locked row
-- and takes the job's advisory lock for its transaction, as good_job's with_appropriate_lock does.
WITH chosen AS MATERIALIZED (
    SELECT j.id FROM {gj} j
    WHERE {admitted}
    ORDER BY j.created_at, j.id LIMIT %(batch)s
    FOR UPDATE OF j SKIP LOCKED
)
