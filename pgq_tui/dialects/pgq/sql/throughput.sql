-- Per-second counters from <table>_stats, summed over writer shards, for the buckets in
-- [%(since)s, %(until)s). The primary key leads with bucket, so this reads only the window.
SELECT s.queue, s.bucket,
       sum(s.enqueued)::bigint AS enqueued, sum(s.completed)::bigint AS completed,
       sum(s.failed)::bigint AS failed, sum(s.dead)::bigint AS dead
FROM {stats} s
WHERE s.bucket >= %(since)s AND s.bucket < %(until)s
GROUP BY s.queue, s.bucket
ORDER BY s.bucket, s.queue
