-- The guard of a requeue: in flight (read, vt in the future) and below the dead rule.
m.vt > now() AND m.read_ct > 0 AND m.read_ct < {dead_reads}
