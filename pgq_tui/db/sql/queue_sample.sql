-- Only when some count passed the cap: a random sample of whole pages (TABLESAMPLE SYSTEM, about
-- %(pct)s percent of the table, sized by the caller to a few thousand rows), whose proportions share
-- out the index size estimates among queues and states. Reads only the sampled pages.
SELECT s.queue, s.status,
       s.status = 'pending' AND s.run_at <= now() AS ready,
       s.status = 'running' AND s.locked_until < now() AS expired,
       count(*) AS n
FROM {jobs} s TABLESAMPLE SYSTEM (%(pct)s)
GROUP BY 1, 2, 3, 4
