-- A job's payload preview: its job_class and the first characters of its ActiveJob serialized_params
-- (arguments), NULL when they are large.
CASE WHEN pg_column_size(j.serialized_params) <= 65536
     THEN left(coalesce(j.job_class, j.serialized_params ->> 'job_class', '?') || ' '
               || coalesce((j.serialized_params -> 'arguments')::text, ''), 200) END
