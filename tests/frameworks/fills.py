"""Rows in the shape a long-lived install of each framework accumulates, inserted by SQL into the
schema the framework's own tool created: for the poll benchmark (benchmarks/bench_framework_poll.py)
and for plan tests that need the planner to see a realistic table.

Where the framework keeps finished jobs (pg-boss, procrastinate), 90% of the rows are finished; where
it deletes them (Graphile Worker, pgqueuer), 90% are dead jobs kept for a human. The rest: 6% ready,
2% scheduled, 1-2% running (a fifth stuck), 1% dead, spread over the given queues. User triggers are
off during the fill, so no NOTIFY storm or event rows. pg-boss needs each queue created first (its
partition): the PGQ_TEST_QUEUES its install creates.
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

# g: row number; b: its bucket 0..99 (90 finished/dead, 6 ready, 2 scheduled, 1 running, 1 dead);
# q: one of the queues, by a hash of g (so no queue's share depends on its bucket)
SERIES = (
    "generate_series(1, %(n)s) g,"
    " LATERAL (SELECT mod(g, 100) AS b,"
    " (%(queues)s::text[])[1 + mod(abs(hashint4(g::int)), cardinality(%(queues)s::text[]))] AS q) x"
)

GRAPHILE = f"""
INSERT INTO graphile_worker._private_tasks (identifier)
SELECT unnest(%(queues)s::text[]) ON CONFLICT DO NOTHING;
ALTER TABLE graphile_worker._private_jobs DISABLE TRIGGER USER;
INSERT INTO graphile_worker._private_jobs (task_id, payload, run_at, attempts, max_attempts, last_error,
                                           locked_at, locked_by)
SELECT t.id, '{{}}',
       CASE WHEN b BETWEEN 96 AND 97 THEN now() + interval '1 hour' ELSE now() - interval '1 minute' END,
       CASE WHEN b < 90 OR b = 99 THEN 3 WHEN b = 98 THEN 1 ELSE 0 END, 3,
       CASE WHEN b < 90 OR b = 99 THEN 'boom' END,
       CASE WHEN b = 98 AND mod(g / 100, 5) = 0 THEN now() - interval '5 hours'
            WHEN b = 98 THEN now() - interval '1 minute' END,
       CASE WHEN b = 98 THEN 'pool-bench' END
FROM {SERIES} JOIN graphile_worker._private_tasks t ON t.identifier = x.q;
ALTER TABLE graphile_worker._private_jobs ENABLE TRIGGER USER
"""
PGBOSS = f"""
INSERT INTO pgboss.job (name, data, state, start_after, started_on, expire_in, completed_on, output)
SELECT q, '{{}}',
       (CASE WHEN b < 90 THEN 'completed' WHEN b < 98 THEN 'created' WHEN b = 98 THEN 'active'
             ELSE 'failed' END)::pgboss.job_state,
       CASE WHEN b BETWEEN 96 AND 97 THEN now() + interval '1 hour' ELSE now() - interval '1 minute' END,
       -- a stuck job started long ago (its worker died), as Graphile's and pgqueuer's below
       CASE WHEN b = 98 AND mod(g / 100, 5) = 0 THEN now() - interval '5 hours'
            WHEN b < 90 OR b >= 98 THEN now() - interval '1 minute' END,
       interval '15 minutes',
       CASE WHEN b < 90 OR b = 99 THEN now() END,
       CASE WHEN b = 99 THEN '{{"message": "boom"}}'::jsonb END
FROM {SERIES}
"""


def _pgboss_modern(heartbeats: bool) -> str:
    """pg-boss 11 and 12: expire_seconds instead of expire_in. From 12.12 the running jobs' workers
    heartbeat (heartbeat_seconds 60): a live one's heartbeat is fresh, a stuck one's (its worker died)
    five hours old; pg-boss 11 (schema 25-29) has no heartbeat columns."""
    beat_columns = ", heartbeat_seconds, heartbeat_on" if heartbeats else ""
    beats = (
        """,
       CASE WHEN b = 98 THEN 60 END,
       CASE WHEN b = 98 AND mod(g / 100, 5) = 0 THEN now() - interval '5 hours'
            WHEN b = 98 THEN now() END"""
        if heartbeats
        else ""
    )
    return f"""
INSERT INTO pgboss.job (name, data, state, start_after, started_on, expire_seconds, completed_on,
                        output{beat_columns})
SELECT q, '{{}}',
       (CASE WHEN b < 90 THEN 'completed' WHEN b < 98 THEN 'created' WHEN b = 98 THEN 'active'
             ELSE 'failed' END)::pgboss.job_state,
       CASE WHEN b BETWEEN 96 AND 97 THEN now() + interval '1 hour' ELSE now() - interval '1 minute' END,
       CASE WHEN b = 98 AND mod(g / 100, 5) = 0 THEN now() - interval '5 hours'
            WHEN b < 90 OR b >= 98 THEN now() - interval '1 minute' END,
       900,
       CASE WHEN b < 90 OR b = 99 THEN now() END,
       CASE WHEN b = 99 THEN '{{"message": "boom"}}'::jsonb END{beats}
FROM {SERIES}
"""


PGBOSS12 = _pgboss_modern(heartbeats=True)
PGBOSS11 = _pgboss_modern(heartbeats=False)
PROCRASTINATE = f"""
-- the live worker: its heartbeat stays fresh through the timing (a day ahead), as a running worker's would
INSERT INTO procrastinate_workers (last_heartbeat) VALUES (now() + interval '1 day');
ALTER TABLE procrastinate_jobs DISABLE TRIGGER USER;
INSERT INTO procrastinate_jobs (queue_name, task_name, args, status, scheduled_at, attempts, worker_id)
SELECT q, 'job', '{{}}',
       (CASE WHEN b < 90 THEN 'succeeded' WHEN b < 98 THEN 'todo' WHEN b = 98 THEN 'doing'
             ELSE 'failed' END)::procrastinate_job_status,
       CASE WHEN b BETWEEN 96 AND 97 THEN now() + interval '1 hour' END, 1,
       -- a stalled job's worker row has been pruned by the live workers: worker_id NULL
       CASE WHEN b = 98 AND mod(g / 100, 5) <> 0 THEN (SELECT max(id) FROM procrastinate_workers) END
FROM {SERIES};
ALTER TABLE procrastinate_jobs ENABLE TRIGGER USER
"""
PGQUEUER = f"""
ALTER TABLE pgqueuer DISABLE TRIGGER USER;
INSERT INTO pgqueuer (priority, entrypoint, payload, status, execute_after, heartbeat, queue_manager_id)
SELECT 0, q, 'x',
       (CASE WHEN b < 90 OR b = 99 THEN 'failed' WHEN b < 98 THEN 'queued'
             ELSE 'picked' END)::pgqueuer_status,
       CASE WHEN b BETWEEN 96 AND 97 THEN now() + interval '1 hour' ELSE now() - interval '1 minute' END,
       CASE WHEN b = 98 AND mod(g / 100, 5) = 0 THEN now() - interval '5 minutes' ELSE now() END,
       CASE WHEN b = 98 THEN gen_random_uuid() END
FROM {SERIES};
ALTER TABLE pgqueuer ENABLE TRIGGER USER
"""

# River (schema river_jobs, as the test driver migrates it): 90% completed (kept 24 h), 6% available,
# 2% scheduled, 1% running (a fifth past River's 1 h rescue horizon), 1% discarded
RIVER = f"""
INSERT INTO river_jobs.river_job (state, queue, kind, args, attempt, attempted_at, attempted_by,
                                  scheduled_at, finalized_at, errors)
SELECT (CASE WHEN b < 90 THEN 'completed' WHEN b < 96 THEN 'available' WHEN b < 98 THEN 'scheduled'
             WHEN b = 98 THEN 'running' ELSE 'discarded' END)::river_jobs.river_job_state,
       q, 'pgq_test', '{{}}', CASE WHEN b < 90 OR b >= 98 THEN 1 ELSE 0 END,
       CASE WHEN b = 98 AND mod(g / 100, 5) = 0 THEN now() - interval '5 hours'
            WHEN b < 90 OR b >= 98 THEN now() - interval '1 minute' END,
       CASE WHEN b < 90 OR b >= 98 THEN ARRAY['bench'] END,
       CASE WHEN b BETWEEN 96 AND 97 THEN now() + interval '1 hour' ELSE now() - interval '1 minute' END,
       CASE WHEN b < 90 OR b = 99 THEN now() END,
       CASE WHEN b = 99 THEN ARRAY['{{"error": "boom"}}'::jsonb] END
FROM {SERIES}
"""

# DBOS 3.4 (columns of dbos.workflow_status as its migrations leave them): 90% SUCCESS (queue_name kept),
# 6% ENQUEUED, 2% DELAYED, 1% PENDING on an executor no session names (so stuck by pgq-top's rule while
# no DBOS executor is connected), 1% finished badly: ERROR, or dead-lettered with queue_name cleared as
# DBOS's own dead_letter_workflows does. Times in epoch ms.
DBOS = f"""
INSERT INTO dbos.workflow_status (workflow_uuid, status, name, executor_id, application_version,
                                  application_name, queue_name, priority, recovery_attempts, created_at,
                                  updated_at, started_at_epoch_ms, completed_at, delay_until_epoch_ms,
                                  error)
SELECT gen_random_uuid()::text,
       CASE WHEN b < 90 THEN 'SUCCESS' WHEN b < 96 THEN 'ENQUEUED' WHEN b < 98 THEN 'DELAYED'
            WHEN b = 98 THEN 'PENDING' WHEN mod(g / 100, 2) = 0 THEN 'ERROR'
            ELSE 'MAX_RECOVERY_ATTEMPTS_EXCEEDED' END,
       'work', CASE WHEN b < 90 OR b >= 98 THEN 'bench-executor' END, 'bench-v1', 'bench',
       CASE WHEN b = 99 AND mod(g / 100, 2) = 1 THEN NULL ELSE q END, 0,
       CASE WHEN b = 99 AND mod(g / 100, 2) = 1 THEN 101 WHEN b < 90 OR b >= 98 THEN 1 ELSE 0 END,
       e.now_ms - 600000 + g, e.now_ms - 60000,
       CASE WHEN b = 98 THEN e.now_ms - 60000 END,
       CASE WHEN b < 90 OR b = 99 THEN e.now_ms - 60000 END,
       CASE WHEN b BETWEEN 96 AND 97 THEN e.now_ms + 3600000 END,
       CASE WHEN b = 99 AND mod(g / 100, 2) = 0 THEN 'boom' END
FROM {SERIES}, (SELECT (extract(epoch FROM now()) * 1000)::bigint AS now_ms) e
"""

# good_job 4.19 (tests/dialect_cases/ddl/good_job.sql, from its install migration): 90% succeeded
# (finished_at, no error), 6% queued, 2% scheduled an hour ahead, 1% running (performed_at, locked_by_id
# a process no row names: stuck by good_job's rules), 1% discarded. UTC timestamps without time zone.
GOOD_JOB = f"""
INSERT INTO good_jobs (id, active_job_id, queue_name, priority, serialized_params, scheduled_at, performed_at,
                       finished_at, error, error_event, executions_count, job_class, locked_by_id, locked_at,
                       created_at, updated_at)
SELECT gen_random_uuid(), gen_random_uuid(), q, 0,
       jsonb_build_object('job_class', 'BenchJob', 'arguments', jsonb_build_array(g)),
       CASE WHEN b BETWEEN 96 AND 97 THEN u.now + interval '1 hour' ELSE u.now - interval '10 minutes' END,
       CASE WHEN b < 90 OR b >= 98 THEN u.now - interval '1 minute' END,
       CASE WHEN b < 90 OR b = 99 THEN u.now END,
       CASE WHEN b = 99 THEN 'RuntimeError: boom' END, CASE WHEN b = 99 THEN 1 END,
       CASE WHEN b < 90 OR b >= 98 THEN 1 ELSE 0 END, 'BenchJob',
       CASE WHEN b = 98 THEN '00000000-0000-4000-8000-000000000001'::uuid END,
       CASE WHEN b = 98 THEN u.now - interval '1 minute' END,
       u.now - interval '10 minutes', u.now
FROM {SERIES}, (SELECT now() AT TIME ZONE 'UTC' AS now) u
"""

# Que 2.4 (que_jobs at schema version 7, as its migrations leave it): 90% finished (kept, as an
# application that calls `finish` keeps them), 6% ready, 2% scheduled, 1% errored (waiting for its
# retry_in backoff), 1% expired. No job is running: a running Que job is an advisory lock a live
# session holds, which a fill cannot leave behind. Que's NOTIFY triggers are off during the fill.
QUE = f"""
ALTER TABLE que_jobs DISABLE TRIGGER USER;
INSERT INTO que_jobs (queue, priority, run_at, job_class, error_count, last_error_message, finished_at,
                      expired_at, args, job_schema_version)
SELECT q, 100,
       CASE WHEN b BETWEEN 96 AND 98 THEN now() + interval '1 hour' ELSE now() - interval '1 minute' END,
       'ReportJob', CASE WHEN b >= 98 THEN 1 ELSE 0 END, CASE WHEN b >= 98 THEN 'RuntimeError: boom' END,
       CASE WHEN b < 90 THEN now() - interval '1 minute' END, CASE WHEN b = 99 THEN now() END,
       jsonb_build_array(g), 2
FROM {SERIES};
ALTER TABLE que_jobs ENABLE TRIGGER USER
"""

FILLS = {
    "graphile-worker": GRAPHILE,
    "pg-boss": PGBOSS,
    "pg-boss-11": PGBOSS11,
    "pg-boss-12.12": PGBOSS12,
    "pg-boss-12": PGBOSS12,
    "procrastinate": PROCRASTINATE,
    "pgqueuer": PGQUEUER,
    "river": RIVER,
    "dbos": DBOS,
    "good-job": GOOD_JOB,
    "que": QUE,
}


def fill(dsn: str, kind: str, n: int, queues: Sequence[str], *, layout: str | None = None) -> None:
    """n rows of the framework `kind` over `queues`; `layout` names another release's fill (e.g.
    "pg-boss-12") where the schema differs."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        for statement in FILLS[layout or kind].split(";\n"):
            conn.execute(statement, {"n": n, "queues": list(queues)})  # type: ignore[call-overload]
