-- The guard of a discard and a retry: dead by pgq-top's rule, read_ct >= {dead_reads}. No consumer is
-- known.
m.read_ct >= {dead_reads}
