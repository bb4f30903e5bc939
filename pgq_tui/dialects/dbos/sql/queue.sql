-- A workflow's queue for the counts: queue_name, or {no_queue} for a workflow started directly
-- (not enqueued) and for those DBOS took off their queue (cancel and dead-letter clear queue_name).
coalesce(j.queue_name, {no_queue})
