-- Dead by pgq-top's rule (read_ct >= {dead_reads}) per queue table {q}, without the advised read_ct
-- index: a scan of the queue table (the engine runs it in the poll while the tables are small, else
-- in the background, and shows the figure stale with its age). Exact: no cap.
-- @branch
SELECT {qname}::text AS queue,
       (SELECT count(*) FROM {q} m WHERE m.read_ct >= {dead_reads})::bigint AS dead
