-- Oban.pause_queue(queue: q) (lib/oban.ex): no row changes, only the signal Oban's notifier sends
-- (Notifier.notify(conf, :signal, a map of action :pause, queue q, ident :any)) on the Postgres
-- notifier's channel `<prefix>.oban_signal`: JSON of action "pause", queue q and ident "any",
-- which every node's producer of that queue applies (Queues.Producer, handle_info :signal). It is
-- not durable: a node that starts or restarts runs the queue as configured. Guard: one named queue
-- ('*' is Oban's every queue, left to Oban's own tools).
WITH sent AS MATERIALIZED (
    SELECT q.queue, pg_notify({signal_channel},
                              json_build_object('action', 'pause', 'queue', q.queue, 'ident', 'any')::text)
    FROM (SELECT %(queue)s::text AS queue) q
    WHERE q.queue <> '*' AND q.queue <> ''
)
SELECT s.queue FROM sent s
