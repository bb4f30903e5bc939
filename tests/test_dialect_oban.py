"""Oban on its own v14 schema in a custom prefix: detection by the table comment (and fallbacks),
counts above 10,000 jobs against ground truth, Lifeline's stuck rule in UTC, and each action leaving
exactly Oban's own row."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta, timezone

import psycopg
import pytest
from dialect_cases.oban import NODE, PRODUCER, connect, fetch, insert, install_schema
from dialect_support import assert_counts_match, cli, collect, counts, row, seq_scanned, snapshot_json

from pgq_tui.actions import Actions
from pgq_tui.detection import find_queues
from pgq_tui.dialects import registry
from pgq_tui.dialects.contract import ActionKind
from pgq_tui.dialects.detect import detect
from pgq_tui.dialects.introspect import read_catalog
from pgq_tui.errors import EXIT_OK, EXIT_REFUSED

SCHEMA = "private"


@pytest.fixture
def oban(empty_dsn: str):
    install_schema(empty_dsn, SCHEMA)
    with connect(empty_dsn, SCHEMA) as conn:
        yield empty_dsn, conn


def utc_now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)  # Oban's timestamps: UTC, no time zone


def test_detection_reads_the_table_comment_then_falls_back(oban) -> None:
    _, conn = oban
    dialects = registry.builtin()

    def found():
        (m,) = [m for m in detect(read_catalog(conn, dialects), dialects) if m.kind == "oban"]
        return m

    m = found()
    assert (m.schema, m.table, m.version) == (SCHEMA, "oban_jobs", "v14") and "table comment" in m.evidence
    conn.execute("COMMENT ON TABLE oban_jobs IS NULL")
    m = found()
    assert m.version == "v14" and "suspended" in m.evidence


BULK = """
INSERT INTO oban_jobs (state, queue, worker, args, attempt, max_attempts, scheduled_at, attempted_at,
                       attempted_by, completed_at, discarded_at, cancelled_at)
SELECT %(state)s::oban_job_state, %(queue)s, 'MyApp.Worker', jsonb_build_object('n', n), %(attempt)s, 20,
       timezone('UTC', now()) + make_interval(secs => %(delay)s),
       CASE WHEN %(attempt)s > 0 THEN timezone('UTC', now()) - make_interval(mins => %(ago)s) END,
       CASE WHEN %(attempt)s > 0 THEN ARRAY['web-1@10.0.0.7', 'p'] END,
       CASE WHEN %(state)s = 'completed' THEN timezone('UTC', now()) END,
       CASE WHEN %(state)s = 'discarded' THEN timezone('UTC', now()) END,
       CASE WHEN %(state)s = 'cancelled' THEN timezone('UTC', now()) END
FROM generate_series(1, %(n)s) n
"""
TRUTH = """
SELECT queue, CASE state::text
    WHEN 'available' THEN 'ready' WHEN 'scheduled' THEN 'scheduled' WHEN 'retryable' THEN 'scheduled'
    WHEN 'executing' THEN CASE WHEN attempted_at < timezone('UTC', now()) - interval '60 minutes'
                               THEN 'stuck' ELSE 'running' END
    WHEN 'discarded' THEN 'dead' WHEN 'completed' THEN 'done' ELSE state::text END, count(*)
FROM oban_jobs GROUP BY 1, 2
"""


def bulk(conn: psycopg.Connection, queue: str, state: str, n: int, *, delay: float = 0, attempt: int = 0,
         ago: float = 1) -> None:  # fmt: skip
    params = {"state": state, "queue": queue, "n": n, "delay": delay, "attempt": attempt, "ago": ago}
    conn.execute(BULK, params)


def test_counts_equal_ground_truth_above_ten_thousand_jobs(oban) -> None:
    dsn, conn = oban
    bulk(conn, "default", "available", 12_000)
    bulk(conn, "default", "scheduled", 10_100, delay=3600)
    bulk(conn, "default", "retryable", 30, delay=15, attempt=1)
    bulk(conn, "default", "completed", 11_000, attempt=1)
    bulk(conn, "default", "discarded", 10_050, attempt=20)
    bulk(conn, "default", "cancelled", 9)
    bulk(conn, "default", "suspended", 2)
    bulk(conn, "mailers", "executing", 3, attempt=1, ago=5)
    bulk(conn, "mailers", "executing", 2, attempt=1, ago=75)
    insert(conn, "mailers", 4)
    truth = Counter({(q, s): n for q, s, n in conn.execute(TRUTH).fetchall()})
    assert truth[("default", "scheduled")] == 10_130 and truth[("mailers", "stuck")] == 2
    assert_counts_match(collect(dsn, "oban", count_cap=50_000), truth, 50_000)  # all exact at the poll
    assert_counts_match(collect(dsn, "oban"), truth, 500)  # the dashboard's cap: lower bounds above it
    settled = collect(dsn, "oban", settle=True)  # then the background's exact counts
    assert_counts_match(settled, truth, 500)
    assert counts(settled) == truth


def _executing(conn: psycopg.Connection, minutes_ago: float, *, max_attempts: int = 20) -> int:
    insert(conn, "work", 1, max_attempts=max_attempts)
    (got,) = fetch(conn, "work", 1)
    conn.execute(
        "UPDATE oban_jobs SET attempted_at = timezone('UTC', now()) - make_interval(mins => %s)"
        " WHERE id = %s",
        (minutes_ago, got),
    )
    return got


def test_stuck_is_lifelines_rescue_after_in_utc(oban, monkeypatch: pytest.MonkeyPatch) -> None:
    dsn, conn = oban
    conn.execute("SET TIME ZONE 'America/Los_Angeles'")  # the session's zone must not matter
    fresh, stuck = _executing(conn, 59), _executing(conn, 61)
    snap = collect(dsn, "oban")
    assert [lease.id for lease in snap.stuck.rows] == [stuck]
    assert [lease.id for lease in snap.leases.rows] == [fresh]
    assert {lease.locked_by for lease in snap.leases.rows} == {f"{NODE} {PRODUCER}"}
    assert "Lifeline" in snap.stuck_rule and "3600 s" in snap.stuck_rule
    monkeypatch.setenv("PGQ_TOP_OBAN_RESCUE_AFTER", "300")
    assert sorted(lease.id for lease in collect(dsn, "oban").stuck.rows) == sorted([fresh, stuck])


def job(conn: psycopg.Connection, job_id: int) -> dict:
    return row(conn, "SELECT * FROM oban_jobs WHERE id = %s", job_id)


def test_rescue_is_lifelines_transition(oban, capsys: pytest.CaptureFixture[str]) -> None:
    dsn, conn = oban
    again, last, fresh = _executing(conn, 70), _executing(conn, 70, max_attempts=1), _executing(conn, 5)
    before = {i: job(conn, i) for i in (again, last)}
    code, out, _ = cli(capsys, "requeue", "--dsn", dsn, "--kind", "oban", "--stuck", "--yes")
    assert code == EXIT_OK and "requeued 2" in out
    assert job(conn, again) == {**before[again], "state": "available"}
    d = job(conn, last)
    assert abs(d["discarded_at"] - utc_now()) < timedelta(seconds=30)
    assert d == {**before[last], "state": "discarded", "discarded_at": d["discarded_at"]}
    assert job(conn, fresh)["state"] == "executing"


def test_retry_and_delete_are_obans_own_and_refuse_changed_rows(
    oban, capsys: pytest.CaptureFixture[str]
) -> None:
    dsn, conn = oban
    bulk(conn, "mailers", "discarded", 3, attempt=20)
    a, b, c = (r[0] for r in conn.execute("SELECT id FROM oban_jobs ORDER BY id").fetchall())
    before = job(conn, a)
    code, out, _ = cli(capsys, "retry", "--dsn", dsn, "--kind", "oban", "--ids", str(a), "--yes")
    assert code == EXIT_OK and "retried 1" in out
    after = job(conn, a)
    assert abs(after["scheduled_at"] - utc_now()) < timedelta(seconds=30)
    assert after == {**before, "state": "available", "max_attempts": 21, "discarded_at": None,
                     "scheduled_at": after["scheduled_at"]}  # fmt: skip
    with Actions(dsn, find_queues(dsn, kind="oban")[0].model) as actions:
        plan = actions.plan(ActionKind.DISCARD, [b, c])
        assert plan.count == 2 and plan.destructive and "delete_job" in plan.description
        conn.execute("UPDATE oban_jobs SET state = 'available', discarded_at = NULL WHERE id = %s", (b,))
        assert actions.execute(plan).changed == 1  # b was retried meanwhile: left alone
    assert job(conn, b)["state"] == "available"
    assert conn.execute("SELECT count(*) FROM oban_jobs WHERE id = %s", (c,)).fetchone()[0] == 0  # type: ignore[index]


def test_cancel_is_obans_cancel_job_on_waiting_jobs(oban, capsys: pytest.CaptureFixture[str]) -> None:
    dsn, conn = oban
    insert(conn, "mailers", 1, delay=3600)
    (scheduled,) = (r[0] for r in conn.execute("SELECT id FROM oban_jobs").fetchall())
    running = _executing(conn, 1)
    before = job(conn, scheduled)
    ids = f"{scheduled},{running}"
    code, out, _ = cli(capsys, "cancel", "--dsn", dsn, "--kind", "oban", "--ids", ids, "--yes")
    assert code == EXIT_OK and "cancelled 1" in out
    after = job(conn, scheduled)
    assert abs(after["cancelled_at"] - utc_now()) < timedelta(seconds=30)
    assert after == {**before, "state": "cancelled", "cancelled_at": after["cancelled_at"]}
    assert job(conn, running)["state"] == "executing"


def test_snapshot_json_kind_and_read_only(oban, capsys: pytest.CaptureFixture[str]) -> None:
    dsn, conn = oban
    bulk(conn, "mailers", "discarded", 1, attempt=20)
    snap = snapshot_json(capsys, "--dsn", dsn)
    assert (snap["kind"], snap["target"]) == ("oban", f"oban v14 · {SCHEMA}.oban_jobs")
    code, _, err = cli(capsys, "--read-only", "discard", "--dsn", dsn, "--dead", "--yes")
    assert code == EXIT_REFUSED and "read-only" in err
    assert conn.execute("SELECT count(*) FROM oban_jobs").fetchone()[0] == 1  # type: ignore[index]


def test_every_poll_statement_is_served_by_an_index(oban) -> None:
    """No count, lease or dead-list read needs a sequential scan of the framework's big tables."""
    dsn, conn = oban
    (target,) = find_queues(dsn, kind="oban")
    assert seq_scanned(conn, target.model) & {"oban_jobs"} == set()
