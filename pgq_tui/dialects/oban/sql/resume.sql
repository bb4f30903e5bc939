-- Oban.resume_queue(queue: q): the signal (action "resume", queue q, ident "any") on
-- `<prefix>.oban_signal`; nodes that had paused the queue run it again. Guard: one named queue.
WITH sent AS MATERIALIZED (
    SELECT q.queue, pg_notify({signal_channel},
                              json_build_object('action', 'resume', 'queue', q.queue, 'ident', 'any')::text)
    FROM (SELECT %(queue)s::text AS queue) q
    WHERE q.queue <> '*' AND q.queue <> ''
)
SELECT s.queue FROM sent s
