"""River: its schema from River's own migrator (rivermigrate, River v0.51's Go program in
tests/frameworks/river), and its jobs from a real River worker or River's insert clients.

- `river` (migration 8, River v0.51's newest): the acceptance drivers' populate, with River's own Go
  client inserting and a real River worker running, killed -9 during a job (tests/frameworks/
  river_client.py).
- `river-6` (migration 6, the line before the notification outbox of 7): River's migrator stopped at
  6, jobs inserted with River's PyPI insert client (`riverqueue` 0.7, SQLAlchemy driver), and every
  later state change the SQL transition River's Go client makes (river_job.sql in riverqueue/river
  riverdriver/riverpgxv5/internal/dbsqlc): the JobGetAvailable claim, completion, the error path to
  retryable/discarded, JobCancel's final state. It covers the older line and every River state
  (pending, cancelled, retryable) the acceptance flow does not reach. Its unique insert targets
  `river_job_kind_unique_key_idx`, which migration 6 dropped, so it fails from 6 on (a test says so).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import psycopg
from frameworks.cases import framework_case
from frameworks.river_client import River, truth_query

from dialect_cases import DialectCase, TruthJob, backdate_column

CLIENT_ID = "worker-host_2026_11_30T12_00_00_000000"


def install_schema(dsn: str, schema: str, version: int) -> None:
    """River's schema at `version` in `schema`, by River's own migrator (rivermigrate)."""
    River.version()  # builds the Go program (skips, or fails in CI, without Go)
    River(dsn, schema=schema).install(version)


@dataclass(frozen=True)
class Args:
    """A job args implementation for the riverqueue client: `kind` and `to_json()`."""

    n: int
    kind: str = "sort"

    def to_json(self) -> str:
        return json.dumps({"n": self.n})


def river_client(dsn: str, schema: str):
    import riverqueue
    import sqlalchemy
    from riverqueue.driver import riversqlalchemy

    engine = sqlalchemy.create_engine(
        "postgresql+psycopg://",
        creator=lambda: psycopg.connect(dsn, options=f"-c search_path={schema}"),
        poolclass=sqlalchemy.pool.NullPool,
    )
    return riverqueue.Client(riversqlalchemy.Driver(engine)), engine


def insert(dsn: str, schema: str, queue: str, count: int, *, at: datetime | None = None, **opts) -> None:
    import riverqueue

    client, engine = river_client(dsn, schema)
    try:
        client.insert_many(
            [
                riverqueue.InsertManyParams(
                    Args(i), riverqueue.InsertOpts(queue=queue, scheduled_at=at, **opts)
                )
                for i in range(count)
            ]
        )
    finally:
        engine.dispose()


# River's JobGetAvailable (the Go producer's claim), for `limit` jobs of one queue.
CLAIM = """
WITH locked_jobs AS (
    SELECT * FROM river_job
    WHERE state = 'available' AND queue = %(queue)s AND scheduled_at <= now()
    ORDER BY priority ASC, scheduled_at ASC, id ASC
    LIMIT %(limit)s FOR UPDATE SKIP LOCKED
)
UPDATE river_job SET state = 'running', attempt = river_job.attempt + 1, attempted_at = now(),
       attempted_by = array_append(river_job.attempted_by, %(client)s::text)
FROM locked_jobs WHERE river_job.id = locked_jobs.id
RETURNING river_job.id
"""
# The completer's transitions (JobSetStateIfRunningMany) for a running job.
COMPLETE = (
    "UPDATE river_job SET state = 'completed', finalized_at = now() WHERE id = ANY(%s) AND state = 'running'"
)
ERRORED = """
UPDATE river_job
SET state = CASE WHEN attempt >= max_attempts THEN 'discarded' ELSE 'retryable' END::river_job_state,
    finalized_at = CASE WHEN attempt >= max_attempts THEN now() END,
    scheduled_at = CASE WHEN attempt >= max_attempts THEN scheduled_at
                        ELSE now() + interval '16 seconds' END,
       errors = array_append(errors, jsonb_build_object('at', now(), 'attempt', attempt, 'error', 'boom',
                                                        'trace', ''))
WHERE id = ANY(%s) AND state = 'running'
"""


def claim(conn: psycopg.Connection, queue: str, limit: int) -> list[int]:
    rows = conn.execute(CLAIM, {"queue": queue, "limit": limit, "client": CLIENT_ID}).fetchall()
    return [r[0] for r in rows]


def populate_schema(dsn: str, schema: str) -> None:
    """Every River state in two queues, through the insert client and River's own transitions."""
    later = datetime.now(timezone.utc) + timedelta(hours=1)
    for queue in ("emails", "reports"):
        insert(dsn, schema, queue, 8)
        insert(dsn, schema, queue, 3, at=later)  # state scheduled
        insert(dsn, schema, queue, 1, priority=3)
    insert(dsn, schema, "billing", 3, max_attempts=1)
    with psycopg.connect(dsn, autocommit=True, options=f"-c search_path={schema}") as conn:
        for queue in ("emails", "reports"):
            conn.execute(COMPLETE, (claim(conn, queue, 2),))
            claim(conn, queue, 1)  # running
            stuck = claim(conn, queue, 1)  # stuck: attempted two hours ago
            conn.execute(
                "UPDATE river_job SET attempted_at = now() - interval '2 hours' WHERE id = ANY(%s)", (stuck,)
            )
            conn.execute(ERRORED, (claim(conn, queue, 1),))  # retryable
        dead = claim(conn, "billing", 2)
        conn.execute(ERRORED, (dead,))  # discarded: max_attempts 1
        # JobCancel's outcome for a waiting job, and a job held pending
        conn.execute(
            "UPDATE river_job SET state = 'cancelled', finalized_at = now(),"
            " metadata = metadata || jsonb_build_object('cancel_attempted_at', now())"
            " WHERE id = (SELECT min(id) FROM river_job WHERE state = 'available' AND queue = 'billing')"
        )
        conn.execute(
            "UPDATE river_job SET state = 'pending' WHERE id = (SELECT max(id) FROM river_job"
            " WHERE state = 'available' AND queue = 'emails')"
        )


def truth_in(schema: str):
    def truth(conn: psycopg.Connection) -> list[TruthJob]:
        return [TruthJob(*r) for r in conn.execute(truth_query(schema)).fetchall()]

    return truth


def case(version: int, schema: str) -> DialectCase:
    return DialectCase(
        f"river-{version}",
        "river",
        schema,
        "river_job",
        lambda dsn: install_schema(dsn, schema, version),
        lambda dsn: populate_schema(dsn, schema),
        truth_in(schema),
        backdate=backdate_column(schema, "river_job", "scheduled_at"),
    )


CASES = [
    case(6, "public"),
    framework_case(
        River,
        "river",
        "river_jobs",
        "river_job",
        backdate=backdate_column("river_jobs", "river_job", "scheduled_at"),
    ),
]
