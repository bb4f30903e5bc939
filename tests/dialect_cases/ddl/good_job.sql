-- good_job 4.19.2's schema, from its install migration
-- (lib/generators/good_job/templates/install/migrations/create_good_jobs.rb.erb in bensheldon/good_job,
-- commit 81db22b) as Rails 7+ writes it on PostgreSQL: `id: :uuid` is uuid DEFAULT gen_random_uuid(),
-- t.datetime is timestamp(6) without time zone (UTC), t.timestamps two NOT NULL ones, limit: 2 smallint.
CREATE TABLE good_jobs (
    id uuid DEFAULT gen_random_uuid() NOT NULL PRIMARY KEY,
    queue_name text,
    priority integer,
    serialized_params jsonb,
    scheduled_at timestamp(6),
    performed_at timestamp(6),
    finished_at timestamp(6),
    error text,
    created_at timestamp(6) NOT NULL,
    updated_at timestamp(6) NOT NULL,
    active_job_id uuid,
    concurrency_key text,
    cron_key text,
    retried_good_job_id uuid,
    cron_at timestamp(6),
    batch_id uuid,
    batch_callback_id uuid,
    is_discrete boolean,
    executions_count integer,
    job_class text,
    error_event smallint,
    labels text[],
    locked_by_id uuid,
    locked_at timestamp(6),
    lock_type smallint
);
CREATE TABLE good_job_batches (
    id uuid DEFAULT gen_random_uuid() NOT NULL PRIMARY KEY,
    created_at timestamp(6) NOT NULL,
    updated_at timestamp(6) NOT NULL,
    description text,
    serialized_properties jsonb,
    on_finish text,
    on_success text,
    on_discard text,
    callback_queue_name text,
    callback_priority integer,
    enqueued_at timestamp(6),
    discarded_at timestamp(6),
    finished_at timestamp(6),
    jobs_finished_at timestamp(6)
);
CREATE TABLE good_job_executions (
    id uuid DEFAULT gen_random_uuid() NOT NULL PRIMARY KEY,
    created_at timestamp(6) NOT NULL,
    updated_at timestamp(6) NOT NULL,
    active_job_id uuid NOT NULL,
    job_class text,
    queue_name text,
    serialized_params jsonb,
    scheduled_at timestamp(6),
    finished_at timestamp(6),
    error text,
    error_event smallint,
    error_backtrace text[],
    process_id uuid,
    duration interval
);
CREATE TABLE good_job_processes (
    id uuid DEFAULT gen_random_uuid() NOT NULL PRIMARY KEY,
    created_at timestamp(6) NOT NULL,
    updated_at timestamp(6) NOT NULL,
    state jsonb,
    lock_type smallint
);
CREATE TABLE good_job_settings (
    id uuid DEFAULT gen_random_uuid() NOT NULL PRIMARY KEY,
    created_at timestamp(6) NOT NULL,
    updated_at timestamp(6) NOT NULL,
    key text,
    value jsonb
);
CREATE UNIQUE INDEX index_good_job_settings_on_key ON good_job_settings (key);

CREATE INDEX index_good_jobs_on_scheduled_at ON good_jobs (scheduled_at) WHERE (finished_at IS NULL);
CREATE INDEX index_good_jobs_on_queue_name_and_scheduled_at ON good_jobs (queue_name, scheduled_at) WHERE (finished_at IS NULL);
CREATE INDEX index_good_jobs_on_active_job_id_and_created_at ON good_jobs (active_job_id, created_at);
CREATE INDEX index_good_jobs_on_concurrency_key_when_unfinished ON good_jobs (concurrency_key) WHERE (finished_at IS NULL);
CREATE INDEX index_good_jobs_on_concurrency_key_and_created_at ON good_jobs (concurrency_key, created_at);
CREATE INDEX index_good_jobs_on_cron_key_and_created_at_cond ON good_jobs (cron_key, created_at) WHERE (cron_key IS NOT NULL);
CREATE UNIQUE INDEX index_good_jobs_on_cron_key_and_cron_at_cond ON good_jobs (cron_key, cron_at) WHERE (cron_key IS NOT NULL);
CREATE INDEX index_good_jobs_jobs_on_finished_at_only ON good_jobs (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX index_good_jobs_jobs_on_priority_created_at_when_unfinished ON good_jobs (priority DESC NULLS LAST, created_at) WHERE finished_at IS NULL;
CREATE INDEX index_good_job_jobs_for_candidate_lookup ON good_jobs (priority ASC NULLS LAST, created_at) WHERE finished_at IS NULL;
CREATE INDEX index_good_jobs_on_batch_id ON good_jobs (batch_id) WHERE batch_id IS NOT NULL;
CREATE INDEX index_good_jobs_on_batch_callback_id ON good_jobs (batch_callback_id) WHERE batch_callback_id IS NOT NULL;
CREATE INDEX index_good_jobs_on_job_class ON good_jobs (job_class);
CREATE INDEX index_good_jobs_on_labels ON good_jobs USING gin (labels) WHERE (labels IS NOT NULL);
CREATE INDEX index_good_job_executions_on_active_job_id_and_created_at ON good_job_executions (active_job_id, created_at);
CREATE INDEX index_good_jobs_on_priority_scheduled_at_unfinished_unlocked ON good_jobs (priority ASC NULLS LAST, scheduled_at) WHERE finished_at IS NULL AND locked_by_id IS NULL;
CREATE INDEX index_good_jobs_on_priority_scheduled_at_unfinished ON good_jobs (priority, scheduled_at, id) WHERE finished_at IS NULL;
CREATE INDEX index_good_jobs_on_queue_name_priority_scheduled_at_unfinished ON good_jobs (queue_name, scheduled_at, id) WHERE finished_at IS NULL;
CREATE INDEX index_good_jobs_on_locked_by_id ON good_jobs (locked_by_id) WHERE locked_by_id IS NOT NULL;
CREATE INDEX index_good_job_executions_on_process_id_and_created_at ON good_job_executions (process_id, created_at);
CREATE INDEX index_good_jobs_for_candidate_dequeue_unlocked ON good_jobs (priority ASC NULLS LAST, scheduled_at, id) WHERE finished_at IS NULL AND locked_by_id IS NULL;
CREATE INDEX index_good_jobs_on_queue_name ON good_jobs (queue_name);
CREATE INDEX index_good_jobs_on_created_at ON good_jobs (created_at);
CREATE INDEX index_good_jobs_on_discarded ON good_jobs (finished_at DESC) WHERE finished_at IS NOT NULL AND error IS NOT NULL;
CREATE INDEX index_good_jobs_on_scheduled_at_and_queue_name ON good_jobs (scheduled_at, queue_name);
CREATE INDEX index_good_jobs_on_unfinished_or_errored ON good_jobs (id) WHERE finished_at IS NULL OR error IS NOT NULL;
