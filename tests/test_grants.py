"""docs/grants.md on a real server: a role given exactly the reading grants the page lists for a kind
runs `pgq-top snapshot --json` with every panel read, and one grant fewer gives the page's one-line
error (the main table or the schema: exit 5) or fails only the panels that read that table.

The kinds: pgq-top's own table, and Oban and Solid Queue, whose schemas come from their own migration
DDL (tests/dialect_cases) in a schema of their own (Oban) and in public (Solid Queue). And acting: a
discard of pgq-top's own table with the page's grants, refused before it plans without them."""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from dialect_cases import DialectCase, all_cases
from psycopg import sql
from psycopg.conninfo import make_conninfo

from pgq_tui import __version__
from pgq_tui.cli import main
from pgq_tui.errors import EXIT_OK, EXIT_PRIVILEGE, EXIT_REFUSED
from pgq_tui.queue import JobQueue

PAGE = Path(__file__).resolve().parent.parent / "docs" / "grants.md"
CASES = {c.id: c for c in all_cases()}


def documented_tables(kind: str) -> list[str]:
    """The tables the page's reading table gives `kind` (the backticked names of its second column)."""
    for line in PAGE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and kind in re.findall(r"`([^`]+)`", cells[0]):
            said = re.sub(r"\(`?USAGE`? on [^)]*\)", "", cells[1])
            return re.findall(r"`([a-z_]+)`", said)
    raise AssertionError(f"docs/grants.md lists no reading grants for {kind}")


def error_line(**values: str) -> str:
    """The page's documented line for a role without SELECT on the main table, filled in."""
    (line,) = re.findall(r"^    (pgq-top: error: permission denied: role .*)$", PAGE.read_text(), flags=re.M)
    for name, value in values.items():
        line = line.replace(name, value)
    return line


@pytest.fixture
def role(empty_dsn: str, server_dsn: str) -> Iterator[tuple[str, str]]:
    with login_role(empty_dsn, server_dsn) as made:
        yield made


@contextlib.contextmanager
def login_role(db_dsn: str, server_dsn: str) -> Iterator[tuple[str, str]]:
    """A login role with pg_monitor only, and its DSN (socket with trust, else TCP with a password)."""
    name, password = f"pgq_g_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    ident = sql.Identifier(name)
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(ident, sql.Literal(password)))
        admin.execute(sql.SQL("GRANT pg_monitor TO {}").format(ident))
    role_dsn = ""
    for candidate in (make_conninfo(db_dsn, user=name, password=password),
                      make_conninfo(db_dsn, host="127.0.0.1", user=name, password=password)):  # fmt: skip
        try:
            psycopg.connect(candidate, connect_timeout=3).close()
            role_dsn = candidate
            break
        except psycopg.OperationalError:
            continue
    assert role_dsn, "the role cannot log in over the socket or TCP"
    yield name, role_dsn
    with psycopg.connect(db_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP OWNED BY {}").format(ident))
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("DROP ROLE {}").format(ident))


def snapshot(capsys: pytest.CaptureFixture[str], dsn: str) -> tuple[int, dict | None, str]:
    capsys.readouterr()
    code = main(["snapshot", "--json", "--wait", "10", "--dsn", dsn])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out else None), err


def grant(dsn: str, verb: str, case: DialectCase, table: str, role: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            sql.SQL(f"{verb} SELECT ON {{}} {'TO' if verb == 'GRANT' else 'FROM'} {{}}").format(
                sql.Identifier(case.schema, table), sql.Identifier(role)
            )
        )


@pytest.mark.parametrize(
    ("case_id", "secondary", "failed_panels"),
    [
        ("pgq", "jobs_stats", {"throughput"}),
        ("oban-14", None, set()),
        ("solid-queue", "solid_queue_processes", {"queues", "leases"}),
    ],
)
def test_the_documented_reading_grants_are_enough_and_each_is_needed(
    empty_dsn: str,
    role: tuple[str, str],
    capsys: pytest.CaptureFixture[str],
    case_id: str,
    secondary: str | None,
    failed_panels: set[str],
) -> None:
    case = CASES[case_id]
    name, role_dsn = role
    case.install(empty_dsn)
    case.populate(empty_dsn)
    tables = documented_tables(case.kind)
    assert case.table in tables and (secondary is None or secondary in tables), tables
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        if case.schema != "public":
            conn.execute(
                sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(
                    sql.Identifier(case.schema), sql.Identifier(name)
                )
            )
    for table in tables:
        grant(empty_dsn, "GRANT", case, table, name)

    code, doc, err = snapshot(capsys, role_dsn)
    assert (code, err) == (EXIT_OK, ""), err
    assert doc is not None and doc["version"] == __version__ and doc["kind"] == case.kind
    assert doc["errors"] == {} and doc["queues"], doc["errors"]

    # the main table: every command stops with the page's line
    grant(empty_dsn, "REVOKE", case, case.table, name)
    code, doc, err = snapshot(capsys, role_dsn)
    assert (code, doc) == (EXIT_PRIVILEGE, None)
    want = error_line(ROLE=name, **{"SCHEMA.TABLE": f"{case.schema}.{case.table}"})
    assert err == want + "\n", err
    grant(empty_dsn, "GRANT", case, case.table, name)

    if secondary is not None:  # a table one panel reads: only those panels fail, with the table named
        grant(empty_dsn, "REVOKE", case, secondary, name)
        code, doc, err = snapshot(capsys, role_dsn)
        assert (code, err) == (EXIT_OK, "") and doc is not None
        assert set(doc["errors"]) == failed_panels, doc["errors"]
        assert all(f"permission denied for table {secondary}" in e for e in doc["errors"].values())
    if case.schema != "public":  # the schema's USAGE
        with psycopg.connect(empty_dsn, autocommit=True) as conn:
            conn.execute(
                sql.SQL("REVOKE USAGE ON SCHEMA {} FROM {}").format(
                    sql.Identifier(case.schema), sql.Identifier(name)
                )
            )
        code, doc, err = snapshot(capsys, role_dsn)
        assert code == EXIT_PRIVILEGE and doc is None
        assert err == f"pgq-top: error: permission denied: permission denied for schema {case.schema}\n"


def test_the_documented_discard_grants_on_pgq_s_table(
    dsn: str, server_dsn: str, queue: JobQueue, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page's acting row for `pgq`: discard locks its rows (UPDATE), deletes them (DELETE) and
    bumps the counter (INSERT, UPDATE on jobs_stats). With DELETE alone the action is refused before
    it plans, naming every privilege it needs, and nothing changes."""
    queue.enqueue("emails", [{}], max_attempts=1)
    (job,) = queue.claim("emails", limit=1)
    assert queue.fail(job, "boom") == "failed"  # dead: its one attempt is spent
    with login_role(dsn, server_dsn) as (name, role_dsn):
        who = sql.Identifier(name)
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("GRANT SELECT, DELETE ON jobs TO {}").format(who))
            conn.execute(sql.SQL("GRANT SELECT ON jobs_stats TO {}").format(who))
        capsys.readouterr()
        code = main(["discard", "--dead", "--yes", "--dsn", role_dsn])
        err = capsys.readouterr().err
        assert code == EXIT_REFUSED, err
        assert "needs SELECT, UPDATE and DELETE on" in err and "GRANT SELECT, UPDATE, DELETE ON" in err, err
        with psycopg.connect(dsn, autocommit=True) as conn:
            assert conn.execute("SELECT count(*) FROM jobs").fetchone() == (1,)
            conn.execute(sql.SQL("GRANT UPDATE ON jobs TO {}").format(who))
            conn.execute(sql.SQL("GRANT INSERT, UPDATE ON jobs_stats TO {}").format(who))
        code = main(["discard", "--dead", "--yes", "--dsn", role_dsn])
        out, err = capsys.readouterr()
        assert (code, err) == (EXIT_OK, ""), err
        assert "discarded 1 of 1 dead job" in out
        with psycopg.connect(dsn, autocommit=True) as conn:
            assert conn.execute("SELECT count(*) FROM jobs").fetchone() == (0,)
