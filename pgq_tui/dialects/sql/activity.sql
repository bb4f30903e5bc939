-- Rows new since the previous poll, per queue (QueueModel.activity): the enqueue side of the per-queue
-- rates, right whoever writes (INSERT, COPY, any client). One template for every dialect whose job ids
-- are increasing integers; each names its jobs table {jobs}, its id column {id} (the primary key) and
-- the queue of job row j ({queue_of_j}: a column, or a lookup by primary key, bound by the dialect).
-- Ids above the previous poll's max(id) (%(after)s), read by a primary-key range scan bounded by the
-- ids allocated since (at most %(max_span)s of them): O(new jobs), never O(table).
-- Plus the previous window's gaps (%(lo)s/%(hi)s ranges) looked up again: an insert can commit after a
-- higher id was already seen. This window's gaps (ids not seen: not committed yet, deleted before
-- this poll, rolled back) come back as ranges, at most %(gap_rows)s, for the next poll to look up.
WITH top AS (
    SELECT coalesce(max(j.{id}), 0)::bigint AS max_id FROM {jobs} j
), fresh AS (
    SELECT j.{id}::bigint AS id, ({queue_of_j})::text AS queue FROM {jobs} j
    WHERE %(after)s::bigint IS NOT NULL  -- the first poll only learns max(id)
      AND j.{id} > greatest(%(after)s::bigint, (SELECT max_id FROM top) - %(max_span)s)
      AND j.{id} <= (SELECT max_id FROM top)
), late AS (
    SELECT l.queue FROM unnest(%(lo)s::bigint[], %(hi)s::bigint[]) AS g(lo, hi)
    CROSS JOIN LATERAL (SELECT ({queue_of_j})::text AS queue FROM {jobs} j
                        WHERE j.{id} BETWEEN g.lo AND g.hi) l
), gaps AS (
    SELECT f.prev + 1 AS lo, f.id - 1 AS hi
    FROM (SELECT id, lag(id, 1, greatest(%(after)s::bigint, (SELECT max_id FROM top) - %(max_span)s))
                     OVER (ORDER BY id) AS prev
          FROM fresh) f
    WHERE f.id > f.prev + 1
    ORDER BY f.prev LIMIT %(gap_rows)s
)
SELECT 'new' AS kind, queue, count(*)::bigint AS n, NULL::bigint AS lo, NULL::bigint AS hi
FROM fresh GROUP BY queue
UNION ALL
SELECT 'late', queue, count(*), NULL, NULL FROM late GROUP BY queue
UNION ALL
SELECT 'gap', NULL, NULL, lo, hi FROM gaps
UNION ALL
SELECT 'top', NULL, max_id, NULL, NULL FROM top
