-- Whether River knows the queue (a river_queue row: a client has started it) and whether it is paused.
SELECT count(*) > 0 AS known, bool_or(q.paused_at IS NOT NULL) AS paused
FROM {queues} q
WHERE q.name = %(queue)s
