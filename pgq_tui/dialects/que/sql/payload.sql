-- A job's payload preview: its job_class (ActiveJob's wrapped class when Que runs ActiveJob, as Que's
-- own que_state_notify reads it) and the first characters of its args and kwargs, NULL when large.
CASE WHEN pg_column_size(j.args) + pg_column_size(j.kwargs) <= 65536 THEN
    left(CASE j.job_class WHEN 'ActiveJob::QueueAdapters::QueAdapter::JobWrapper'
                          THEN coalesce(j.args->0->>'job_class', j.job_class) ELSE j.job_class END
         || ' ' || j.args::text || CASE WHEN j.kwargs <> jsonb_build_object() THEN ' ' || j.kwargs::text ELSE '' END,
         200) END
