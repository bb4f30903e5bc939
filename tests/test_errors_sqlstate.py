"""Errors by SQLSTATE class (issue 22, item 4): each class has its own message and exit code, on a
real server, through the CLI. "cannot connect" is said of connection failures only, and a failed
action says truthfully that its batch was rolled back (and nothing changed).

Every condition is real except disk full: a trigger the test creates raises SQLSTATE 53100
(disk_full) from PL/pgSQL, as a full disk would during the UPDATE.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from pgq_tui.errors import (
    EXIT_CONFLICT,
    EXIT_CONNECT,
    EXIT_LOCK_TIMEOUT,
    EXIT_PRIVILEGE,
    EXIT_RESOURCES,
    EXIT_SCHEMA,
    EXIT_STATEMENT_TIMEOUT,
)
from pgq_tui.queue import JobQueue


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pgq_tui", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def stuck(dsn: str) -> list[int]:
    with JobQueue(dsn) as q:
        ids = q.enqueue("mail", [{"n": i} for i in range(3)])
        assert len(q.claim("mail", limit=3, lease=0.01)) == 3
    time.sleep(0.05)
    return ids


@pytest.fixture
def admin(dsn: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        yield conn


def on_update(admin: psycopg.Connection, body: str) -> None:
    """A BEFORE UPDATE trigger on jobs whose PL/pgSQL body is `body`."""
    admin.execute(
        "CREATE FUNCTION pgq_test_trigger() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        + body
        + " RETURN NEW; END $$"
    )
    admin.execute(
        "CREATE TRIGGER pgq_test BEFORE UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION pgq_test_trigger()"
    )


def still_stuck(admin: psycopg.Connection, ids: list[int]) -> bool:
    rows = admin.execute("SELECT count(*) FROM jobs WHERE id = ANY(%s) AND status = 'running'", (ids,))
    return rows.fetchone() == (len(ids),)


def requeue(dsn: str) -> tuple[int, str]:
    proc = cli("requeue", "--stuck", "--yes", "--dsn", dsn)
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    return proc.returncode, proc.stderr


def test_connection_failure() -> None:
    proc = cli("snapshot", "--dsn", "host=127.0.0.1 port=1 connect_timeout=3")
    assert proc.returncode == EXIT_CONNECT and "cannot connect to PostgreSQL" in proc.stderr, proc.stderr


def test_statement_timeout(dsn: str, stuck: list[int], admin: psycopg.Connection) -> None:
    on_update(admin, "PERFORM pg_sleep(60);")  # longer than the actions' 15 s statement_timeout
    code, err = requeue(dsn)
    assert code == EXIT_STATEMENT_TIMEOUT and "statement timeout" in err and "rolled back" in err, err
    assert "cannot connect" not in err and still_stuck(admin, stuck)


def test_lock_timeout(dsn: str, stuck: list[int], admin: psycopg.Connection) -> None:
    with psycopg.connect(dsn) as holder:
        holder.execute("LOCK TABLE jobs IN SHARE MODE")  # reads pass, the UPDATE waits for it
        code, err = requeue(dsn)
        holder.rollback()
    assert code == EXIT_LOCK_TIMEOUT and "lock timeout" in err and "rolled back" in err, err
    assert "cannot connect" not in err and still_stuck(admin, stuck)


def test_deadlock(dsn: str, stuck: list[int], admin: psycopg.Connection) -> None:
    # the UPDATE takes advisory lock 1 then waits for 2, which we hold; then we ask for 1
    on_update(admin, "PERFORM pg_advisory_xact_lock(1); PERFORM pg_advisory_xact_lock(2);")
    with psycopg.connect(dsn) as other:
        other.execute("SET deadlock_timeout = '30s'")  # the server finds the cycle on pgq-top's side
        other.execute("SELECT pg_advisory_xact_lock(2)")
        result: list[tuple[int, str]] = []
        runner = threading.Thread(target=lambda: result.append(requeue(dsn)))
        runner.start()
        deadline = time.monotonic() + 30
        while not admin.execute(
            "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = 2 AND NOT granted"
        ).fetchone():
            assert time.monotonic() < deadline, "the requeue never waited for the lock"
            time.sleep(0.02)
        other.execute("SELECT pg_advisory_xact_lock(1)")  # closes the cycle: one of us is rolled back
        runner.join(60)
        other.rollback()
    code, err = result[0]
    assert code == EXIT_CONFLICT and "deadlock" in err and "rolled back" in err, err
    assert "may or may not" not in err and "cannot connect" not in err and still_stuck(admin, stuck)


def test_missing_privilege(dsn: str, server_dsn: str) -> None:
    name, password = "pgq_no_select", uuid.uuid4().hex
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(name), sql.Literal(password))
        )
    try:
        # the socket with trust (the embedded server), else TCP with the password (a Debian cluster)
        for role_dsn in (
            make_conninfo(dsn, user=name, password=password),
            make_conninfo(dsn, host="127.0.0.1", user=name, password=password),
        ):
            try:
                psycopg.connect(role_dsn, connect_timeout=3).close()
                break
            except psycopg.OperationalError:
                continue
        proc = cli("snapshot", "--table", "jobs", "--dsn", role_dsn)
        assert proc.returncode == EXIT_PRIVILEGE and "permission denied" in proc.stderr, proc.stderr
    finally:
        with psycopg.connect(server_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))


def test_missing_object(dsn: str) -> None:
    proc = cli("snapshot", "--table", "no_such_table", "--dsn", dsn)
    assert proc.returncode == EXIT_SCHEMA and "does not exist" in proc.stderr, proc.stderr
    assert "cannot connect" not in proc.stderr


def test_disk_full(dsn: str, stuck: list[int], admin: psycopg.Connection) -> None:
    on_update(
        admin, "RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full';"
    )
    code, err = requeue(dsn)
    assert code == EXIT_RESOURCES and "out of resources" in err and "rolled back" in err, err
    assert "cannot connect" not in err and still_stuck(admin, stuck)
