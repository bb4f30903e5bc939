"""The seed scenarios of the docs' recorded examples (tests/docs_examples.py), one place for all.

A scenario fills an empty database (`seed`, once: the test keeps one database per scenario for its
module), may hold sessions open while an example runs (`live`: an idle transaction ages past the
threshold its example passes), and may put files beside the command (`files`). Each is small and
built so the example's output is the same on every run once times, pids and sizes are normalised:
ages are set by backdating rows, not by waiting, and each seed ends with a VACUUM so no dead-tuple
count depends on when autovacuum last came by.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import psycopg
from dialect_cases import seed as seed_shapes

from pgq_tui.queue import JobQueue

Live = Callable[[str], contextlib.AbstractContextManager[None]]


@dataclass(frozen=True)
class Scenario:
    what: str
    seed: Callable[[str], None]  # the DSN of an empty database
    live: Live | None = None
    files: dict[str, str] = field(default_factory=dict)


def _vacuum(dsn: str, *tables: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        _alone(conn)
        for table in tables:
            conn.execute(psycopg.sql.SQL("VACUUM (ANALYZE) {}").format(psycopg.sql.Identifier(table)))


def _alone(conn: psycopg.Connection, timeout_s: float = 10.0) -> None:
    """Wait until `conn` is its database's only client session. A session that wrote the seed and
    closed flushes its statistics as its backend exits, after the client has moved on: a VACUUM
    before that flush saw its dead tuples counted again after it ('dead_tuples'=12, not 0, in a
    check example, under CI's load). A backend leaves pg_stat_activity only after that flush (the
    flush is a before_shmem_exit callback, the entry's removal an on_shmem_exit one)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        others = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
        ).fetchone()
        if not others or not others[0]:
            return
        time.sleep(0.02)


def _pgq(dsn: str) -> JobQueue:
    q = JobQueue(dsn)
    q.install()
    return q


def expired_leases(dsn: str) -> None:
    """60 jobs whose workers' 50 ms leases expired, and one job of another queue waiting 10 minutes."""
    with _pgq(dsn) as q:
        q.enqueue("emails", [{}] * 60)
        assert len(q.claim("emails", limit=60, lease=0.05)) == 60
        q.enqueue("reports", [{}], run_at=datetime.now(timezone.utc) - timedelta(minutes=10))
    time.sleep(0.1)
    _vacuum(dsn, "jobs")


def backlog(dsn: str) -> None:
    """50 jobs of queue emails waiting two minutes, no worker."""
    with _pgq(dsn) as q:
        q.enqueue("emails", [{}] * 50, run_at=datetime.now(timezone.utc) - timedelta(minutes=2))
    _vacuum(dsn, "jobs")


@contextlib.contextmanager
def idle_holder(dsn: str, hold_s: float = 1.2) -> Iterator[None]:
    """A session of application 'report' idle in a transaction with an xid, open `hold_s` seconds
    before the example runs (past its `--xmin-hold 1`) and until it ends."""
    with psycopg.connect(dsn, application_name="report") as holder:
        holder.execute("SELECT txid_current()")
        time.sleep(hold_s)
        yield


def dead_rows(dsn: str) -> None:
    """12,000 jobs of queue emails; the example's live part completes 11,000 of them under a holder."""
    with _pgq(dsn) as q:
        for _ in range(12):
            q.enqueue("emails", [{}] * 1000)
    _vacuum(dsn, "jobs")


@contextlib.contextmanager
def dead_rows_held(dsn: str) -> Iterator[None]:
    """An idle transaction of 'report' holds the xmin horizon while 11,000 jobs are marked done (11,000
    dead tuples, twice pgq-top's autovacuum threshold of 5,000), and a VACUUM runs once the example's
    `why` has polled: it can remove none of them, which the next poll sees."""
    with psycopg.connect(dsn, application_name="report") as holder:
        holder.execute("SELECT txid_current()")
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("UPDATE jobs SET status = 'done', finished_at = now() WHERE id <= 11000")
            if conn.info.server_version >= 150000:  # else the stats arrive within the 1.2 s below
                conn.execute("SELECT pg_stat_force_next_flush()")
        time.sleep(1.2)
        stop = threading.Event()

        def vacuum_after_the_first_poll() -> None:
            with psycopg.connect(dsn, autocommit=True) as conn:
                while not stop.is_set():
                    seen = conn.execute(
                        "SELECT count(*) FROM pg_stat_activity"
                        " WHERE datname = current_database() AND application_name LIKE 'pgq-top%%'"
                    ).fetchone()
                    if seen and seen[0]:
                        break
                    time.sleep(0.05)
                time.sleep(0.6)
                if not stop.is_set():
                    conn.execute("VACUUM jobs")

        thread = threading.Thread(target=vacuum_after_the_first_poll, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(30)
    with psycopg.connect(dsn, autocommit=True) as conn:  # the next run starts from 12,000 pending
        conn.execute("UPDATE jobs SET status = 'pending', finished_at = NULL")
        if conn.info.server_version >= 150000:  # the UPDATE's dead tuples counted before the VACUUM's
            conn.execute("SELECT pg_stat_force_next_flush()")
        conn.execute("VACUUM jobs")


def failed_payments(dsn: str) -> None:
    """Queue payments: 5 jobs dead after their one attempt (3 refused connections, 2 invalid cards),
    and 10 waiting."""
    with _pgq(dsn) as q:
        q.enqueue("payments", [{"customer": {"id": 40 + n}} for n in range(5)], max_attempts=1)
        errors = ["connection refused (gateway 10.0.0.7:443)", "invalid card"]
        for n, job in enumerate(q.claim("payments", limit=5)):
            assert q.fail(job, errors[n % 2] if n < 4 else errors[0]) == "failed"
        q.enqueue("payments", [{"customer": {"id": 50 + n}} for n in range(10)])
    _vacuum(dsn, "jobs")


def seed_jobs_stock(dsn: str) -> None:
    """The seed article's `jobs` table as it writes it (no index for running jobs): per queue 6
    ready, 3 scheduled, 2 done, 1 running and 1 whose lease expired (tests/dialect_cases/seed.py)."""
    seed_shapes.seed_jobs_install_stock(dsn)
    seed_shapes.seed_jobs_populate(dsn)
    _vacuum(dsn, "jobs")


# The seed shape with the application's own statuses: not pgq-top's table.
HOME_GROWN = """
CREATE TABLE jobs (id bigserial PRIMARY KEY, queue text, payload jsonb, status text DEFAULT 'queued',
                   run_at timestamptz DEFAULT now(), attempts int DEFAULT 0, locked_until timestamptz);
INSERT INTO jobs (queue, payload, status)
SELECT 'mail', '{}', (ARRAY['queued', 'processing', 'finished'])[1 + g % 3] FROM generate_series(1, 30) g;
"""


def home_grown(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(HOME_GROWN)


def older_pgq(dsn: str) -> None:
    """pgq-top's table from an older version (no heartbeat_at) with 20,000 jobs, and a claim index
    left invalid by a failed concurrent build (a unique index over duplicate queues)."""
    with _pgq(dsn) as q:
        for _ in range(20):
            q.enqueue("emails", [{}] * 1000)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ALTER TABLE jobs DROP COLUMN heartbeat_at")
        conn.execute("DROP INDEX jobs_claim_idx")
        with contextlib.suppress(psycopg.errors.UniqueViolation):
            conn.execute("CREATE UNIQUE INDEX CONCURRENTLY jobs_claim_idx ON jobs (queue)")
    _vacuum(dsn, "jobs")


def read_only_database(dsn: str) -> None:
    """pgq-top's table with jobs waiting, in a database whose transactions are read-only (what a DSN
    that landed on a standby gives a worker)."""
    with _pgq(dsn) as q:
        q.enqueue("emails", [{}] * 5)
    with psycopg.connect(dsn, autocommit=True) as conn:
        db = conn.info.dbname
        conn.execute(
            psycopg.sql.SQL("ALTER DATABASE {} SET default_transaction_read_only = on").format(
                psycopg.sql.Identifier(db)
            )
        )


def three_queues(dsn: str) -> None:
    """One database with three queues: pgq-top's table (empty), procrastinate's schema (its own SQL)
    with one job of queue 'slow' stalled (fetched by a worker whose heartbeat stopped a minute ago),
    and the seed article's `job_queue` (8 ready, 2 scheduled, 2 locked by a live worker, 1 locked an
    hour ago: stuck by its mapping's 30-minute rule)."""
    from procrastinate.schema import SchemaManager

    _pgq(dsn).close()
    seed_shapes.job_queue_install(dsn)
    seed_shapes.job_queue_populate(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(SchemaManager.get_schema())
        conn.execute(
            "INSERT INTO procrastinate_jobs (queue_name, task_name, args) VALUES ('slow', 'job', '{}')"
        )
        worker = conn.execute("SELECT procrastinate_register_worker_v1()").fetchone()[0]  # type: ignore[index]
        conn.execute("SELECT * FROM procrastinate_fetch_job_v2(ARRAY['slow'], %s)", (worker,))
        conn.execute(
            "UPDATE procrastinate_workers SET last_heartbeat = now() - interval '1 minute' WHERE id = %s",
            (worker,),
        )
    _vacuum(dsn, "jobs", "job_queue", "procrastinate_jobs")


# A mapping whose `ready` list is empty (line 12): refused before any server is asked.
BILLING_TOML = """\
# billing's own jobs table
kind = "billing"
title = "billing jobs"

[columns]
id = "id"
status = "state"
run_at = "due_at"
locked_at = "picked_at"

[states]
ready = []
running = ["picked"]

[stuck]
rule = "lock_age"
interval = "15 minutes"
"""


def solid_queue_recurring(dsn: str) -> None:
    """Solid Queue's schema (its own DDL) with two recurring tasks: an hourly one whose last run was
    three hours ago, and one every 5 minutes whose key is markup (it must print as text)."""
    from test_schedules_tui import _tasks

    _tasks(dsn)
    _vacuum(dsn)


def nothing(dsn: str) -> None:
    """An empty database."""


SCENARIOS: dict[str, Scenario] = {
    "expired-leases": Scenario("pgq: 60 expired leases, one job waiting 10 min", expired_leases),
    "backlog-and-holder": Scenario(
        "pgq: 50 jobs waiting 2 min, no worker, an idle transaction of 'report'", backlog, idle_holder
    ),
    "dead-tuples-held": Scenario(
        "pgq: 11,000 dead tuples an idle transaction keeps from vacuum", dead_rows, dead_rows_held
    ),
    "failed-payments": Scenario("pgq: 5 dead payments (3 connection refused), 10 waiting", failed_payments),
    "seed-jobs-stock": Scenario("the seed article's jobs table, stock: 2 stuck, 2 running", seed_jobs_stock),
    "home-grown": Scenario("an application's own jobs table (queued/processing/finished)", home_grown),
    "older-pgq": Scenario("pgq-top's table from an older version, an invalid claim index", older_pgq),
    "read-only": Scenario("pgq: jobs waiting in a read-only database", read_only_database),
    "three-queues": Scenario("pgq, procrastinate (1 stalled) and the seed job_queue (1 stuck)", three_queues),
    "solid-queue-recurring": Scenario(
        "Solid Queue: an hourly task last run 3 h ago, a 5-minute one never run", solid_queue_recurring
    ),
    "bad-mapping": Scenario(
        "a mapping file with an empty ready list", nothing, files={"billing.toml": BILLING_TOML}
    ),
}
