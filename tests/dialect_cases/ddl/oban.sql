-- Oban's schema at migration v14, DDL facts only, from oban-bg/oban lib/oban/migrations/postgres/v01.ex
-- .. v14.ex (Ecto migrations: :map is jsonb, {:array, :map} jsonb[], :utc_datetime_usec a UTC
-- `timestamp without time zone`), and lib/oban/migrations/postgres.ex, which records the version as
-- the table's comment. Created in the current search_path (Oban's "prefix"). Only what v14 leaves
-- behind: v2's scheduled_at index (dropped by v5), v7's attempted_at index (dropped by v10), the
-- oban_notify trigger (dropped by v12) and oban_wrap_id (dropped by v4) are omitted.
CREATE TYPE oban_job_state AS ENUM ('available', 'suspended', 'scheduled', 'executing', 'retryable', 'completed',
                                    'discarded', 'cancelled');
CREATE TABLE oban_jobs (
    id bigserial PRIMARY KEY,
    state oban_job_state NOT NULL DEFAULT 'available',
    queue text NOT NULL DEFAULT 'default',
    worker text NOT NULL,
    args jsonb NOT NULL DEFAULT '{}',                             -- v10: default
    errors jsonb[] NOT NULL DEFAULT ARRAY[]::jsonb[],
    attempt integer NOT NULL DEFAULT 0,
    max_attempts integer NOT NULL DEFAULT 20,
    inserted_at timestamp NOT NULL DEFAULT timezone('UTC', now()),
    scheduled_at timestamp NOT NULL DEFAULT timezone('UTC', now()),
    attempted_at timestamp,
    completed_at timestamp,
    attempted_by text[],                                          -- v3
    discarded_at timestamp,                                       -- v8
    priority integer NOT NULL DEFAULT 0,                          -- v8, NOT NULL v10
    tags text[] DEFAULT ARRAY[]::text[],                          -- v8
    meta jsonb DEFAULT '{}',                                      -- v9
    cancelled_at timestamp,                                       -- v9
    CONSTRAINT worker_length CHECK (char_length(worker) > 0 AND char_length(worker) < 128),   -- v2
    CONSTRAINT queue_length CHECK (char_length(queue) > 0 AND char_length(queue) < 128),      -- v2
    CONSTRAINT positive_max_attempts CHECK (max_attempts > 0),                                -- v10
    CONSTRAINT attempt_range CHECK (attempt BETWEEN 0 AND max_attempts),                      -- v10
    CONSTRAINT non_negative_priority CHECK (priority >= 0)                                    -- v12
);
CREATE INDEX oban_jobs_state_queue_priority_scheduled_at_id_index
    ON oban_jobs (state, queue, priority, scheduled_at, id);                                  -- v8/v9
CREATE INDEX oban_jobs_args_index ON oban_jobs USING gin (args);                              -- v10
CREATE INDEX oban_jobs_meta_index ON oban_jobs USING gin (meta);                              -- v10
CREATE INDEX oban_jobs_state_cancelled_at_index ON oban_jobs (state, cancelled_at);          -- v13
CREATE INDEX oban_jobs_state_discarded_at_index ON oban_jobs (state, discarded_at);          -- v13
CREATE UNLOGGED TABLE oban_peers (                                                            -- v11
    name text NOT NULL PRIMARY KEY,
    node text NOT NULL,
    started_at timestamp NOT NULL,
    expires_at timestamp NOT NULL
);
COMMENT ON TABLE oban_jobs IS '14';
