"""The seed article's two home-grown shapes, built and driven by plain SQL (no client exists)."""

from __future__ import annotations

import psycopg

from dialect_cases import DialectCase, TruthJob, backdate_column

# Shape (2), as the article defines it, plus the index the dashboard asks for (leases.sql advice).
SEED_JOBS = """
CREATE TABLE jobs (
    id bigserial PRIMARY KEY,
    queue text,
    payload jsonb,
    status text DEFAULT 'pending',
    run_at timestamptz DEFAULT now(),
    attempts int DEFAULT 0,
    locked_until timestamptz
);
CREATE INDEX jobs_pending_idx ON jobs (queue, run_at) WHERE status = 'pending';
"""
SEED_JOBS_ADVISED = "CREATE INDEX jobs_running_idx ON jobs (queue, locked_until) WHERE status = 'running'"

# The seed's claim, as a plain-SQL worker runs it.
SEED_JOBS_CLAIM = """
UPDATE jobs SET status = 'running', attempts = attempts + 1,
                locked_until = now() + make_interval(secs => %(lease)s)
WHERE id IN (SELECT id FROM jobs WHERE status = 'pending' AND queue = %(queue)s AND run_at <= now()
             ORDER BY run_at, id LIMIT %(n)s FOR UPDATE SKIP LOCKED)
RETURNING id
"""


def seed_jobs_install(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(SEED_JOBS)
        conn.execute(SEED_JOBS_ADVISED)


def seed_jobs_install_stock(dsn: str) -> None:
    """Exactly as the article writes it: no index for running jobs (they are read by a scan)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(SEED_JOBS)


def seed_jobs_populate(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        for queue in ("mail", "thumbs"):
            conn.execute(
                "INSERT INTO jobs (queue, payload) SELECT %s, jsonb_build_object('n', g) "
                "FROM generate_series(1, 6) g",
                (queue,),
            )
            conn.execute(
                "INSERT INTO jobs (queue, payload, run_at) SELECT %s, '{}', now() + interval '1 hour' "
                "FROM generate_series(1, 3)",
                (queue,),
            )
            done = conn.execute(SEED_JOBS_CLAIM, {"queue": queue, "n": 2, "lease": 60}).fetchall()
            conn.execute("UPDATE jobs SET status = 'done' WHERE id = ANY(%s)", ([r[0] for r in done],))
            conn.execute(SEED_JOBS_CLAIM, {"queue": queue, "n": 1, "lease": 600})
            conn.execute(SEED_JOBS_CLAIM, {"queue": queue, "n": 1, "lease": -60})  # a crashed worker's


SEED_JOBS_TRUTH = """
SELECT id, queue,
       CASE status WHEN 'pending' THEN CASE WHEN run_at <= now() THEN 'ready' ELSE 'scheduled' END
                   WHEN 'running' THEN CASE WHEN locked_until < now() THEN 'stuck' ELSE 'running' END
                   ELSE status END
FROM jobs ORDER BY id
"""

# Shape (1): no queue column, no lease; a claim index by priority, and the index the dashboard
# asks for to read claimed rows.
JOB_QUEUE = """
CREATE TABLE job_queue (
    id bigserial PRIMARY KEY,
    payload jsonb NOT NULL DEFAULT '{}',
    status text NOT NULL DEFAULT 'pending',
    priority int NOT NULL DEFAULT 0,
    scheduled_at timestamptz NOT NULL DEFAULT now(),
    locked_at timestamptz,
    worker_id text
);
CREATE INDEX job_queue_claim_idx ON job_queue (priority DESC, id) WHERE status = 'pending';
"""
JOB_QUEUE_ADVISED = "CREATE INDEX job_queue_running_idx ON job_queue (locked_at) WHERE status = 'processing'"

JOB_QUEUE_CLAIM = """
UPDATE job_queue SET status = 'processing', locked_at = now() - make_interval(secs => %(age)s),
                     worker_id = %(worker)s
WHERE id IN (SELECT id FROM job_queue WHERE status = 'pending' AND scheduled_at <= now()
             ORDER BY priority DESC, id LIMIT %(n)s FOR UPDATE SKIP LOCKED)
RETURNING id
"""


def job_queue_install(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(JOB_QUEUE)
        conn.execute(JOB_QUEUE_ADVISED)


def job_queue_install_stock(dsn: str) -> None:
    """Exactly as the article writes it: no index for claimed rows (they are read by a scan)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(JOB_QUEUE)


def job_queue_populate(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO job_queue (payload, priority) SELECT '{}', g % 3 FROM generate_series(1, 8) g"
        )
        conn.execute(
            "INSERT INTO job_queue (scheduled_at) SELECT now() + interval '1 day' FROM generate_series(1, 2)"
        )
        conn.execute(JOB_QUEUE_CLAIM, {"age": 1, "worker": "w-live", "n": 2})
        conn.execute(JOB_QUEUE_CLAIM, {"age": 3600, "worker": "w-crashed", "n": 1})  # locked an hour ago


JOB_QUEUE_TRUTH = """
SELECT id, 'default',
       CASE status WHEN 'pending' THEN CASE WHEN scheduled_at <= now() THEN 'ready' ELSE 'scheduled' END
                   WHEN 'processing' THEN CASE WHEN locked_at < now() - interval '30 minutes'
                                               THEN 'stuck' ELSE 'running' END
                   ELSE status END
FROM job_queue ORDER BY id
"""


# The table's definition as pg_dump would restore it: columns with types, defaults and nullability,
# every index and constraint by its definition, options and triggers.
DEFINITION = """
SELECT (SELECT array_agg(format('%%s %%s %%s %%s', a.attname, format_type(a.atttypid, a.atttypmod),
                                a.attnotnull, pg_get_expr(d.adbin, d.adrelid)) ORDER BY a.attnum)
        FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid = %(t)s::regclass AND a.attnum > 0 AND NOT a.attisdropped),
       (SELECT array_agg(pg_get_indexdef(indexrelid) ORDER BY 1) FROM pg_index
        WHERE indrelid = %(t)s::regclass),
       (SELECT array_agg(pg_get_constraintdef(oid) ORDER BY 1) FROM pg_constraint
        WHERE conrelid = %(t)s::regclass),
       (SELECT array_agg(tgname ORDER BY 1) FROM pg_trigger WHERE tgrelid = %(t)s::regclass),
       (SELECT reloptions FROM pg_class WHERE oid = %(t)s::regclass)
"""


def definition(conn: psycopg.Connection, table: str) -> tuple:
    """The table's definition (DEFINITION): equal before and after means pgq-top changed nothing."""
    return conn.execute(DEFINITION, {"t": table}).fetchone()  # type: ignore[return-value]


def _truth(query: str):
    def truth(conn: psycopg.Connection) -> list[TruthJob]:
        return [TruthJob(*r) for r in conn.execute(query).fetchall()]

    return truth


CASES = [
    DialectCase(
        "seed-jobs",
        "seed-jobs",
        "public",
        "jobs",
        seed_jobs_install,
        seed_jobs_populate,
        _truth(SEED_JOBS_TRUTH),
        backdate=backdate_column("public", "jobs", "run_at"),
    ),
    DialectCase(
        "seed-job-queue",
        "seed-job-queue",
        "public",
        "job_queue",
        job_queue_install,
        job_queue_populate,
        _truth(JOB_QUEUE_TRUTH),
        backdate=backdate_column("public", "job_queue", "scheduled_at"),
    ),
    # the stock shapes: every count, list and action through scans, no index asked for
    DialectCase(
        "seed-jobs-stock",
        "seed-jobs",
        "public",
        "jobs",
        seed_jobs_install_stock,
        seed_jobs_populate,
        _truth(SEED_JOBS_TRUTH),
        backdate=backdate_column("public", "jobs", "run_at"),
    ),
    DialectCase(
        "seed-job-queue-stock",
        "seed-job-queue",
        "public",
        "job_queue",
        job_queue_install_stock,
        job_queue_populate,
        _truth(JOB_QUEUE_TRUTH),
        backdate=backdate_column("public", "job_queue", "scheduled_at"),
    ),
]
