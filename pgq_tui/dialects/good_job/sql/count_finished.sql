-- Finished jobs, each state %(cap1)s rows over all queues together, then counted per queue.
-- dead = good_job's `discarded` scope (finished_at set, error set), through its
-- index_good_jobs_on_discarded (finished_at DESC) WHERE finished_at IS NOT NULL AND error IS NOT NULL
-- (4.18); done = its `succeeded` scope (finished_at set, error NULL), through
-- index_good_jobs_jobs_on_finished_at_only (finished_at) WHERE finished_at IS NOT NULL.
WITH final AS MATERIALIZED (
    (SELECT j.queue_name AS queue, 'dead' AS state FROM {gj} j
     WHERE j.finished_at IS NOT NULL AND j.error IS NOT NULL ORDER BY j.finished_at DESC LIMIT %(cap1)s)
    UNION ALL
    (SELECT j.queue_name, 'done' FROM {gj} j
     WHERE j.finished_at IS NOT NULL AND j.error IS NULL ORDER BY j.finished_at LIMIT %(cap1)s)
)
SELECT f.queue::text AS queue, count(*) FILTER (WHERE f.state = 'dead') AS dead,
       count(*) FILTER (WHERE f.state = 'done') AS done
FROM final f GROUP BY f.queue
