-- Que's schema at version 7 (que 2.4.1, que-rb/que lib/que/migrations/1..7/up.sql applied in order),
-- written out as the state those migrations leave: que_jobs with its columns, defaults, checks and
-- indexes, que_lockers (unlogged) and que_values, and the version in que_jobs's comment
-- (lib/que/migrations.rb set_db_version). Que's NOTIFY triggers (que_job_notify, que_state_notify) are
-- left out: they only send notifications, and pgq-top reads no notification.
CREATE TABLE que_jobs (
    priority             smallint    NOT NULL DEFAULT 100,         -- 1, 2 (default 100), 3 (smallint)
    run_at               timestamptz NOT NULL DEFAULT now(),
    id                   bigserial   NOT NULL,                     -- 1 (job_id), 4 (renamed id, its sequence que_jobs_id_seq)
    job_class            text        NOT NULL,
    error_count          integer     NOT NULL DEFAULT 0,
    last_error_message   text,                                     -- 4 (renamed from last_error)
    queue                text        NOT NULL DEFAULT 'default',   -- 3, 4 (default 'default')
    last_error_backtrace text,                                     -- 4
    finished_at          timestamptz,                              -- 4
    expired_at           timestamptz,                              -- 4
    args                 jsonb       NOT NULL DEFAULT '[]',        -- 4
    data                 jsonb       NOT NULL DEFAULT '{}',        -- 4
    job_schema_version   integer     NOT NULL,                     -- 5, 6 (NOT NULL, no default)
    kwargs               jsonb       NOT NULL DEFAULT '{}',        -- 6
    CONSTRAINT que_jobs_pkey PRIMARY KEY (id),
    CONSTRAINT queue_length CHECK (char_length(queue) <= 100),
    CONSTRAINT valid_args CHECK (jsonb_typeof(args) = 'array'),
    CONSTRAINT valid_data CHECK (jsonb_typeof(data) = 'object'),
    CONSTRAINT error_length CHECK (char_length(last_error_message) <= 500
                                   AND char_length(last_error_backtrace) <= 10000)
) WITH (fillfactor = 90);
-- 5 and 6: the poll index (job_schema_version first), the only b-tree besides the primary key
CREATE INDEX que_poll_idx ON que_jobs (job_schema_version, queue, priority, run_at, id)
    WHERE (finished_at IS NULL AND expired_at IS NULL);
CREATE INDEX que_jobs_data_gin_idx ON que_jobs USING gin (data jsonb_path_ops);
CREATE INDEX que_jobs_args_gin_idx ON que_jobs USING gin (args jsonb_path_ops);
CREATE INDEX que_jobs_kwargs_gin_idx ON que_jobs USING gin (kwargs jsonb_path_ops);

CREATE TABLE que_values (
    key   text PRIMARY KEY,
    value jsonb NOT NULL DEFAULT '{}',
    CONSTRAINT valid_value CHECK (jsonb_typeof(value) = 'object')
) WITH (fillfactor = 90);

-- 4, 5: one row per running locker, keyed by its backend pid (Locker#startup register_locker)
CREATE UNLOGGED TABLE que_lockers (
    pid                integer NOT NULL CONSTRAINT que_lockers_pkey PRIMARY KEY,
    worker_count       integer NOT NULL,
    worker_priorities  integer[] NOT NULL,
    ruby_pid           integer NOT NULL,
    ruby_hostname      text    NOT NULL,
    queues             text[]  NOT NULL,
    listening          boolean NOT NULL,
    job_schema_version integer DEFAULT 1,
    CONSTRAINT valid_worker_priorities CHECK (array_ndims(worker_priorities) = 1
                                              AND array_length(worker_priorities, 1) IS NOT NULL),
    CONSTRAINT valid_queues CHECK (array_ndims(queues) = 1 AND array_length(queues, 1) IS NOT NULL)
);

COMMENT ON TABLE que_jobs IS '7';
