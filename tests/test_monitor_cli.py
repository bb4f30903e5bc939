"""`pgq-top snapshot` end to end through `pgq_tui.cli.main`: JSON, the rich summary, one-line errors
with documented exit codes, and a least-privilege role (pg_monitor + SELECT on the jobs table)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql as q
from psycopg.conninfo import make_conninfo

from pgq_tui import __version__
from pgq_tui.cli import main
from pgq_tui.errors import EXIT_CONNECT, EXIT_OK, EXIT_PRIVILEGE, EXIT_SCHEMA, EXIT_USAGE
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.queue import JobQueue


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["snapshot", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def role(dsn: str, server_dsn: str) -> Iterator[tuple[str, str]]:
    """A login role with no privileges, and a DSN for it (socket with trust, else TCP with password)."""
    name, password = f"pgq_r_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(
            q.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(q.Identifier(name), q.Literal(password))
        )
    role_dsn = ""
    for candidate in (make_conninfo(dsn, user=name, password=password),
                      make_conninfo(dsn, host="127.0.0.1", user=name, password=password)):  # fmt: skip
        try:
            psycopg.connect(candidate, connect_timeout=3).close()
            role_dsn = candidate
            break
        except psycopg.OperationalError:
            continue
    yield name, role_dsn
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(q.SQL("DROP OWNED BY {}").format(q.Identifier(name)))
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(q.SQL("DROP ROLE {}").format(q.Identifier(name)))


def test_json_snapshot(dsn: str, queue: JobQueue, capsys: pytest.CaptureFixture[str]) -> None:
    queue.enqueue("emails", [{}] * 3)
    code, out, err = run(capsys, "--dsn", dsn, "--json")
    assert (code, err) == (EXIT_OK, "")
    data = json.loads(out)
    assert {"server", "queues", "leases", "stuck", "throughput", "table", "sessions"} <= set(data)
    (row,) = data["queues"]
    assert {k: row[k] for k in ("queue", "ready", "scheduled", "running", "stuck", "dead", "done")} == {
        "queue": "emails", "ready": 3, "scheduled": 0, "running": 0, "stuck": 0, "dead": 0, "done": 0,
    }  # fmt: skip
    assert data.pop("version") == __version__  # the document's, beside the Snapshot's own keys
    assert Snapshot.from_dict(data).to_dict() == data


def test_readable_summary_prints_untrusted_text_literally(
    dsn: str, queue: JobQueue, capsys: pytest.CaptureFixture[str]
) -> None:
    queue.enqueue("[red]x[/red]", [{}])
    code, out, _ = run(capsys, "--dsn", dsn)
    assert code == EXIT_OK
    assert "[red]x[/red]" in out and "queues" in out and "public.jobs" in out


def test_dsn_from_database_url(
    dsn: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", dsn)
    code, out, _ = run(capsys, "--json")
    assert (
        code == EXIT_OK
        and json.loads(out)["server"]["database"] == psycopg.conninfo.conninfo_to_dict(dsn)["dbname"]
    )


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--table", "nope"], EXIT_SCHEMA, "table public.nope does not exist"),
        (["--table", "wrong"], EXIT_SCHEMA, "not a pgq-top jobs table: missing columns"),
        (["--schema", "nowhere"], EXIT_SCHEMA, "table nowhere.jobs does not exist"),
    ],
)
def test_schema_errors(
    dsn: str,
    sql: psycopg.Connection,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    code: int,
    message: str,
) -> None:
    sql.execute("CREATE TABLE wrong (id bigint, queue text, status text)")
    got, out, err = run(capsys, "--dsn", dsn, *args)
    assert (got, out) == (code, "")
    assert err.startswith("pgq-top: error: ") and message in err and err.count("\n") == 1


def test_connection_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--dsn", "host=/nonexistent-socket-dir connect_timeout=2")
    assert code == EXIT_CONNECT and "cannot connect" in err and err.count("\n") == 1
    code, _, err = run(capsys, "--dsn", "not a dsn")
    assert code == EXIT_USAGE and "bad DSN" in err


def test_role_without_privileges(dsn: str, role: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    name, role_dsn = role
    code, out, err = run(capsys, "--dsn", role_dsn, "--json")
    assert (code, out) == (EXIT_PRIVILEGE, "")
    assert f"role {name} cannot read public.jobs" in err and "GRANT SELECT" in err and err.count("\n") == 1


def test_least_privilege_role(
    dsn: str, role: tuple[str, str], queue: JobQueue, capsys: pytest.CaptureFixture[str]
) -> None:
    name, role_dsn = role
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(q.SQL("GRANT pg_monitor TO {}").format(q.Identifier(name)))
        conn.execute(q.SQL("GRANT SELECT ON jobs TO {}").format(q.Identifier(name)))
        idle = psycopg.connect(dsn, application_name="someone-else")
        idle.execute("SELECT txid_current()")
    queue.enqueue("a", [{}] * 2)
    queue.claim("a", limit=1)
    try:
        code, out, err = run(capsys, "--dsn", role_dsn, "--json")
        assert (code, err) == (EXIT_OK, "")
        data = json.loads(out)
        # without SELECT on the counters and pauses tables only throughput and the paused figure
        # degrade, each with a reason
        assert (
            set(data["errors"]) == {"throughput", "pauses"} and "jobs_stats" in data["errors"]["throughput"]
        )
        assert "jobs_pauses" in data["errors"]["pauses"] and data["queues"][0]["paused"] is None
        assert [(r["queue"], r["ready"], r["running"]) for r in data["queues"]] == [("a", 1, 1)]
        assert data["leases"]["rows"][0]["holder_connected"]  # pg_stat_activity of other roles is visible
        idle_rows = [s for s in data["sessions"]["idle_in_transaction"] if s["application"] == "someone-else"]
        assert idle_rows and idle_rows[0]["query"] == "SELECT txid_current()"
        assert data["table"]["table_bytes"] > 0
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(q.SQL("GRANT SELECT ON jobs_stats, jobs_pauses TO {}").format(q.Identifier(name)))
        code, out, _ = run(capsys, "--dsn", role_dsn, "--json")
        assert code == EXIT_OK and json.loads(out)["errors"] == {}
        assert sum(p["enqueued"] for p in json.loads(out)["throughput"]["history"]) in (
            0,
            2,
        )  # 2 once complete
    finally:
        idle.close()
