-- pg-boss 12.38 (schema 46): each queue's counts as pg-boss's own monitor last wrote them on the queue
-- table (cacheQueueStats: one aggregate over the live jobs, every monitorIntervalSeconds, 60 s by
-- default, while an instance supervises; also getQueueStats with force). Its ready, deferred
-- and blocked are ours: created or retry, not blocked, start_after passed (ready) or not (scheduled),
-- and blocked; failed is our dead. monitor_on is stamped only by the statements that write the counts,
-- with pg-boss's job_now() (now(), unless a test clock moved it: never later than ours).
-- Left out: a queue never counted (monitor_on NULL: its zeros are column defaults), and counts written
-- before the upgrade to schema 46 (a bam row of 44 or later created after them): 12.35 and older
-- counted blocked jobs as ready and deferred, and had no blocked_count.
SELECT q.name AS queue,
       least(q.monitor_on, now()) AS as_of,
       q.ready_count AS ready,
       q.deferred_count AS scheduled,
       q.blocked_count AS blocked,
       q.failed_count AS dead
FROM {queue} q
WHERE q.monitor_on IS NOT NULL
  AND q.monitor_on > coalesce((SELECT max(b.created_on) FROM {bam} b WHERE b.version >= 44), '-infinity')
  AND q.name NOT LIKE '\_\_pgboss\_\_%%'
