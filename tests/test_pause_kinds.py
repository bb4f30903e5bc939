"""Pause and resume per kind, on each framework's own schema: Solid Queue's solid_queue_pauses row
(from its queue_schema.rb), Oban OSS's signal on `<prefix>.oban_signal` in Oban's own payload (the
test LISTENs), and a kind without a pause saying so in one line, never faking it."""

from __future__ import annotations

import json

import psycopg
import pytest
from dialect_cases.oban import connect as oban_connect
from dialect_cases.oban import insert as oban_insert
from dialect_cases.oban import install_schema as oban_schema
from dialect_cases.solid_queue import claim, enqueue, install, register
from dialect_support import cli, snapshot_json
from psycopg import sql

from pgq_tui.errors import EXIT_OK, EXIT_REFUSED

OBAN = "private"


def _queue(snap: dict, name: str) -> dict:
    return next(q for q in snap["queues"] if q["queue"] == name)


def _selector_claim(conn: psycopg.Connection, queues: list[str], process: int) -> list[int]:
    """A Solid Queue worker's poll as its QueueSelector makes it: its queues minus the paused ones
    (Pause.all.pluck(:queue_name)), then ReadyExecution.claim on each."""
    paused = {r[0] for r in conn.execute("SELECT queue_name FROM solid_queue_pauses").fetchall()}
    return [job for q in queues if q not in paused for job in claim(conn, q, 10, process)]


def test_solid_queue_pause_is_a_pauses_row_its_workers_skip(
    empty_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    install(empty_dsn)
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        enqueue(conn, "mail", 3)
        enqueue(conn, "other", 2)
        process = register(conn, "worker-1", 4242)
        code, out, err = cli(capsys, "pause", "--dsn", empty_dsn, "--queue", "mail", "--yes")
        assert (code, err) == (EXIT_OK, ""), err
        assert "paused queue 'mail'" in out
        (row,) = conn.execute("SELECT queue_name, created_at FROM solid_queue_pauses").fetchall()
        age = conn.execute("SELECT (now() AT TIME ZONE 'UTC') - %s", (row[1],)).fetchone()[0]  # type: ignore[index]
        assert row[0] == "mail" and abs(age.total_seconds()) < 60  # Rails' UTC timestamp
        snap = snapshot_json(capsys, "--dsn", empty_dsn)
        assert _queue(snap, "mail")["paused"] is True and _queue(snap, "other")["paused"] is False
        assert _queue(snap, "mail")["paused_figure"]["source"] == "solid_queue_pauses"
        assert len(_selector_claim(conn, ["mail", "other"], process)) == 2  # only "other"'s
        code, _, err = cli(capsys, "pause", "--dsn", empty_dsn, "--queue", "mail", "--yes")
        assert code == EXIT_REFUSED and "already paused" in err
        code, out, err = cli(capsys, "resume", "--dsn", empty_dsn, "--queue", "mail", "--yes")
        assert (code, err) == (EXIT_OK, ""), err
        assert conn.execute("SELECT count(*) FROM solid_queue_pauses").fetchone() == (0,)
        assert len(_selector_claim(conn, ["mail", "other"], process)) == 3
        code, _, err = cli(capsys, "resume", "--dsn", empty_dsn, "--queue", "mail", "--yes")
        assert code == EXIT_REFUSED and "not paused" in err
    assert _queue(snapshot_json(capsys, "--dsn", empty_dsn), "mail")["paused"] is False


def test_oban_pause_is_its_signal_and_says_it_is_not_durable(
    empty_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    oban_schema(empty_dsn, OBAN)
    with oban_connect(empty_dsn, OBAN) as conn:
        oban_insert(conn, "mail", 2)
    with psycopg.connect(empty_dsn, autocommit=True) as listener:
        listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(f"{OBAN}.oban_signal")))
        code, out, err = cli(capsys, "pause", "--dsn", empty_dsn, "--queue", "mail", "--yes")
        assert (code, err) == (EXIT_OK, ""), err
        assert "not durable" in out and "paused queue 'mail'" in out
        (note,) = list(listener.notifies(timeout=5, stop_after=1))
        # Oban's Notifier.decode reads plain JSON; its producer matches action and queue, the
        # notifier's in_scope? the ident "any" (lib/oban/notifier.ex, lib/oban/queues/producer.ex)
        assert json.loads(note.payload) == {"action": "pause", "queue": "mail", "ident": "any"}
        code, out, err = cli(capsys, "resume", "--dsn", empty_dsn, "--queue", "mail", "--yes")
        assert (code, err) == (EXIT_OK, ""), err
        (note,) = list(listener.notifies(timeout=5, stop_after=1))
        assert json.loads(note.payload) == {"action": "resume", "queue": "mail", "ident": "any"}
        code, out, err = cli(capsys, "pause", "--dsn", empty_dsn, "--queue", "*", "--yes")
        assert code == EXIT_REFUSED and "one named queue" in err, err
        assert list(listener.notifies(timeout=0.5)) == []
    mail = _queue(snapshot_json(capsys, "--dsn", empty_dsn), "mail")
    assert mail["paused"] is None and mail["paused_figure"]["accuracy"] == "unknown"
    assert "node's memory" in mail["paused_figure"]["reason"]


def test_a_kind_without_pause_says_so_in_one_line(empty_dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE jobs (id bigserial PRIMARY KEY, queue text NOT NULL, payload jsonb, status text"
            " NOT NULL DEFAULT 'pending', run_at timestamptz NOT NULL DEFAULT now(), attempts int NOT NULL"
            " DEFAULT 0, locked_until timestamptz)"
        )
        conn.execute("CREATE INDEX ON jobs (queue, run_at) WHERE status = 'pending'")
        conn.execute("INSERT INTO jobs (queue, payload) VALUES ('a', '{}')")
    code, out, err = cli(capsys, "pause", "--dsn", empty_dsn, "--queue", "a", "--yes")
    assert code == EXIT_REFUSED and out == ""
    assert err.count("\n") == 1 and "has no queue pause" in err, err
    snap = snapshot_json(capsys, "--dsn", empty_dsn)
    assert "has no queue pause" in snap["unsupported"]["pause"]
    (a,) = snap["queues"]
    assert a["paused"] is None and a["paused_figure"]["accuracy"] == "unsupported"
