-- Per-second counters from <table>_stats, summed over writer shards, for the buckets since
-- %(since)s. The primary key leads with bucket, so this reads only the window. The rates take the
-- whole seconds before %(until)s; the operator's removals (discarded, pruned: rows stamped with
-- their exact time) are read up to now, so a discard made a moment before this poll is known to it.
SELECT s.queue, s.bucket,
       sum(s.enqueued)::bigint AS enqueued, sum(s.completed)::bigint AS completed,
       sum(s.failed)::bigint AS failed, sum(s.dead)::bigint AS dead,
       sum(s.discarded)::bigint AS discarded, sum(s.pruned)::bigint AS pruned
FROM {stats} s
WHERE s.bucket >= %(since)s
GROUP BY s.queue, s.bucket
ORDER BY s.bucket, s.queue
