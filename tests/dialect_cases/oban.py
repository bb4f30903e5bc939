"""Oban: its v14 schema from Oban's own migration DDL (ddl/oban.sql), in a custom prefix.

Oban needs Elixir and Hex, which do not install here, so jobs move through the SQL transitions
Oban's Basic engine makes (lib/oban/engines/basic.ex in oban-bg/oban): insert, fetch_jobs (the
claim), complete_job, error_job (retryable with backoff, or discarded when out of attempts),
cancel_job. All timestamps are UTC without time zone, as Oban writes them.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
from psycopg import sql

from dialect_cases import DialectCase, TruthJob, backdate_column

DDL = Path(__file__).with_name("ddl") / "oban.sql"
NODE = "web-1@10.0.0.7"
PRODUCER = "2f1d8f1c-8b1e-4c52-9a8f-6c1d3e5b7a90"


def install_schema(dsn: str, schema: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        conn.execute(DDL.read_text())


def connect(dsn: str, schema: str) -> psycopg.Connection:
    return psycopg.connect(dsn, autocommit=True, options=f"-c search_path={schema}")


# Oban.insert_all: the columns Oban.Job sets; scheduled jobs are inserted with state scheduled.
INSERT = """
INSERT INTO oban_jobs (state, queue, worker, args, max_attempts, priority, scheduled_at)
SELECT CASE WHEN %(delay)s > 0 THEN 'scheduled' ELSE 'available' END::oban_job_state, %(queue)s,
       'MyApp.Worker', jsonb_build_object('n', n), %(max_attempts)s, %(priority)s,
       timezone('UTC', now()) + make_interval(secs => %(delay)s)
FROM generate_series(1, %(count)s) n
"""
# Engine.fetch_jobs: available by priority, scheduled_at, id; attempt < max_attempts.
FETCH = """
WITH subset AS (
    SELECT id FROM oban_jobs WHERE state = 'available' AND queue = %(queue)s
    ORDER BY priority, scheduled_at, id LIMIT %(limit)s FOR UPDATE SKIP LOCKED
)
UPDATE oban_jobs j SET state = 'executing', attempted_at = timezone('UTC', now()),
       attempted_by = ARRAY[%(node)s, %(producer)s], attempt = j.attempt + 1
FROM subset WHERE j.id = subset.id AND j.attempt < j.max_attempts
RETURNING j.id
"""
COMPLETE = (
    "UPDATE oban_jobs SET state = 'completed', completed_at = timezone('UTC', now()) WHERE id = ANY(%s)"
)
# Engine.error_job: retryable at the backoff while attempts remain, else discarded.
ERROR = """
UPDATE oban_jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'discarded' ELSE 'retryable' END::oban_job_state,
    discarded_at = CASE WHEN attempt >= max_attempts THEN timezone('UTC', now()) END,
    scheduled_at = CASE WHEN attempt >= max_attempts THEN scheduled_at
                        ELSE timezone('UTC', now()) + interval '17 seconds' END,
    errors = array_append(errors, jsonb_build_object('at', timezone('UTC', now()), 'attempt', attempt,
                                                     'error', '** (RuntimeError) boom'))
WHERE id = ANY(%s)
"""


def insert(conn: psycopg.Connection, queue: str, count: int, *, delay: float = 0, max_attempts: int = 20,
           priority: int = 0) -> None:  # fmt: skip
    conn.execute(
        INSERT,
        {"queue": queue, "count": count, "delay": delay, "max_attempts": max_attempts, "priority": priority},
    )


def fetch(conn: psycopg.Connection, queue: str, limit: int) -> list[int]:
    params = {"queue": queue, "limit": limit, "node": NODE, "producer": PRODUCER}
    return [r[0] for r in conn.execute(FETCH, params).fetchall()]


def populate_schema(dsn: str, schema: str) -> None:
    with connect(dsn, schema) as conn:
        for queue in ("default", "mailers"):
            insert(conn, queue, 8)
            insert(conn, queue, 2, priority=2)
            insert(conn, queue, 3, delay=3600)
            conn.execute(COMPLETE, (fetch(conn, queue, 2),))
            fetch(conn, queue, 1)  # executing
            stuck = fetch(conn, queue, 1)
            conn.execute(
                "UPDATE oban_jobs SET attempted_at = timezone('UTC', now()) - interval '61 minutes'"
                " WHERE id = ANY(%s)",
                (stuck,),
            )
            conn.execute(ERROR, (fetch(conn, queue, 1),))  # retryable
        insert(conn, "billing", 3, max_attempts=1)
        conn.execute(ERROR, (fetch(conn, "billing", 2),))  # discarded
        conn.execute(  # Engine.cancel_job on a waiting job
            "UPDATE oban_jobs SET state = 'cancelled', cancelled_at = timezone('UTC', now())"
            " WHERE id = (SELECT min(id) FROM oban_jobs WHERE state = 'available' AND queue = 'billing')"
        )
        conn.execute(
            "UPDATE oban_jobs SET state = 'suspended' WHERE id = (SELECT max(id) FROM oban_jobs"
            " WHERE state = 'available' AND queue = 'mailers')"
        )


TRUTH = """
SELECT id, queue,
       CASE state::text
            WHEN 'available' THEN 'ready' WHEN 'scheduled' THEN 'scheduled' WHEN 'retryable' THEN 'scheduled'
            WHEN 'executing' THEN CASE WHEN attempted_at < timezone('UTC', now()) - interval '60 minutes'
                                       THEN 'stuck' ELSE 'running' END
            WHEN 'discarded' THEN 'dead' WHEN 'completed' THEN 'done'
            ELSE state::text END AS state
FROM {} ORDER BY id
"""


def truth_in(schema: str):
    def truth(conn: psycopg.Connection) -> list[TruthJob]:
        query = sql.SQL(TRUTH).format(sql.Identifier(schema, "oban_jobs"))
        return [TruthJob(*r) for r in conn.execute(query).fetchall()]

    return truth


SCHEMA = "private"
CASES = [
    DialectCase(
        "oban-14",
        "oban",
        SCHEMA,
        "oban_jobs",
        lambda dsn: install_schema(dsn, SCHEMA),
        lambda dsn: populate_schema(dsn, SCHEMA),
        truth_in(SCHEMA),
        backdate=backdate_column(SCHEMA, "oban_jobs", "scheduled_at", now="(now() AT TIME ZONE 'UTC')"),
    )
]
