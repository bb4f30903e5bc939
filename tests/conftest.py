"""The real-database test harness.

One server per test run (per pytest-xdist worker): the one in PGQ_TEST_DSN when set (then serial),
else a private server from the binaries in PGQ_TEST_PGBIN when set (another PostgreSQL version: Debian's
/usr/lib/postgresql/15/bin, pgserver's 16), else a private embedded PostgreSQL 18.
The queue schema is installed once into a template database; every test that asks for `dsn` gets a
fresh database cloned from it (CREATE DATABASE ... TEMPLATE), dropped afterwards.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from pgq_tui.queue import JobQueue

# pyproject's addopts ask pytest-xdist for `-n auto`; this hook says how many workers that is. Each
# worker is a pytest session of its own, so `server_dsn` below starts one embedded server per worker:
# tests that read cluster-wide state (sessions, xmin holders, prepared transactions, replication slots,
# what vacuum can remove) never see another worker's sessions. Most tests wait on servers, framework
# workers and polls rather than on the CPU, hence more workers than cores (docs/development.md).
WORKERS = 4


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    chosen = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    if chosen:
        return int(chosen)
    if os.environ.get("PGQ_TEST_DSN"):
        # One shared server: parallel workers would see each other's sessions and xmin holders, so the
        # cluster-wide assertions would race. Run serially (an explicit -n N still wins).
        return 0
    return WORKERS


@pytest.fixture(scope="session", autouse=True)
def _stop_live_framework_workers() -> Iterator[None]:
    """The conformance cases' live framework workers (tests/frameworks/cases.py) stop with the session
    that started them, not at interpreter exit: a pytest-xdist worker ends without atexit hooks, and its
    workers would otherwise outlive the run by minutes."""
    yield
    cases = sys.modules.get("frameworks.cases")
    if cases is not None:
        cases.stop_live_workers()


@pytest.fixture(scope="session", autouse=True)
def _audit_log_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every write a test makes is audited (pgq_tui/audit.py): into a file of the run's, never into
    the user's ~/.local/state. Set in os.environ so spawned pgq-top processes inherit it."""
    before = os.environ.get("PGQ_TOP_AUDIT_LOG")
    os.environ["PGQ_TOP_AUDIT_LOG"] = str(tmp_path_factory.mktemp("audit") / "audit.jsonl")
    yield
    if before is None:
        os.environ.pop("PGQ_TOP_AUDIT_LOG", None)
    else:
        os.environ["PGQ_TOP_AUDIT_LOG"] = before


@pytest.fixture(scope="session")
def server_dsn() -> Iterator[str]:
    """A superuser DSN to the test server's maintenance database."""
    external = os.environ.get("PGQ_TEST_DSN")
    if external:
        yield external
        return
    from pathlib import Path

    from pgq_tui.demo.embedded import FAST_UNSAFE_SETTINGS, EmbeddedPostgres

    # Prepared transactions on, so the xmin-holder tests can make one (the server default is 0), and
    # wal_level logical so the diagnosis test can make a logical replication slot.
    settings = {**FAST_UNSAFE_SETTINGS, "max_prepared_transactions": "10", "wal_level": "logical"}
    pgbin = os.environ.get("PGQ_TEST_PGBIN")
    server = EmbeddedPostgres(settings=settings, bin_path=Path(pgbin) if pgbin else None)
    yield server.start()
    server.stop()


@pytest.fixture(scope="session")
def server_version(server_dsn: str) -> int:
    with psycopg.connect(server_dsn) as conn:
        return int(conn.execute("SHOW server_version_num").fetchone()[0])


def _admin(server_dsn: str) -> psycopg.Connection:
    return psycopg.connect(server_dsn, autocommit=True)


@pytest.fixture(scope="session")
def template_db(server_dsn: str) -> Iterator[str]:
    name = f"pgq_tpl_{uuid.uuid4().hex[:10]}"
    with _admin(server_dsn) as admin:
        admin.execute(psycopg.sql.SQL("CREATE DATABASE {}").format(psycopg.sql.Identifier(name)))
    with JobQueue(make_conninfo(server_dsn, dbname=name)) as q:
        q.install()
    yield name
    with _admin(server_dsn) as admin:
        admin.execute(
            psycopg.sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(psycopg.sql.Identifier(name))
        )


@pytest.fixture
def dsn(server_dsn: str, template_db: str) -> Iterator[str]:
    """A fresh database with the jobs schema installed, private to this test."""
    name = f"pgq_t_{uuid.uuid4().hex[:12]}"
    ident = psycopg.sql.Identifier(name)
    with _admin(server_dsn) as admin:
        admin.execute(
            psycopg.sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                ident, psycopg.sql.Identifier(template_db)
            )
        )
    yield make_conninfo(server_dsn, dbname=name)
    with _admin(server_dsn) as admin:
        admin.execute(psycopg.sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))


@pytest.fixture
def empty_dsn(server_dsn: str) -> Iterator[str]:
    """A fresh empty database (no pgq-top schema), for other frameworks' schemas and seed tables."""
    name = f"pgq_e_{uuid.uuid4().hex[:12]}"
    ident = psycopg.sql.Identifier(name)
    with _admin(server_dsn) as admin:
        admin.execute(psycopg.sql.SQL("CREATE DATABASE {}").format(ident))
    yield make_conninfo(server_dsn, dbname=name)
    with _admin(server_dsn) as admin:
        admin.execute(psycopg.sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))


@pytest.fixture
def queue(dsn: str) -> Iterator[JobQueue]:
    with JobQueue(dsn) as q:
        yield q


@pytest.fixture
def sql(dsn: str) -> Iterator[psycopg.Connection]:
    """A plain autocommit connection to the test database, for setting up and checking state."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        yield conn


@pytest.fixture
def crash_env(dsn: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The test database, with a `handler_runs` table that tests/crash_handler.py:record fills."""
    monkeypatch.setenv("PGQ_CRASH_DSN", dsn)  # inherited by the spawned workers
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE handler_runs (job_id bigint NOT NULL, pid int NOT NULL,"
            " started_at timestamptz NOT NULL DEFAULT clock_timestamp())"
        )
    return dsn


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A temporary directory a root-started embedded server's user can enter. pytest's tmp_path lies
    under a 0700 directory, and pgq-top opens no directory up (it refuses a data directory there)."""
    path = Path(tempfile.mkdtemp(prefix="pgq-open-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)
