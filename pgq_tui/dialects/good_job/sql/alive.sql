-- The ids of the good_job processes alive by GoodJob::Process.active ({process_active}).
-- Uncorrelated: read once per statement (an InitPlan), whatever the number of jobs judged.
(SELECT coalesce(array_agg(p.id), ARRAY[]::uuid[]) FROM {gp} p WHERE {process_active})
