"""River on its own migrations' schema (6 and 7): detection, counts above 10,000 jobs against
ground truth, the JobRescuer's stuck rule, and each action leaving exactly River's own row."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta, timezone

import psycopg
import pytest
from dialect_cases.river import CLIENT_ID, Args, claim, insert, install_schema, river_client
from dialect_support import assert_counts_match, cli, collect, counts, row, seq_scanned, snapshot_json

from pgq_tui.actions import Actions
from pgq_tui.detection import find_queues
from pgq_tui.dialects import registry
from pgq_tui.dialects.contract import ActionKind
from pgq_tui.dialects.detect import detect
from pgq_tui.dialects.introspect import read_catalog
from pgq_tui.errors import EXIT_OK, EXIT_REFUSED

SCHEMA = "river_jobs"


@pytest.fixture(params=[6, 7])
def river(request: pytest.FixtureRequest, empty_dsn: str):
    install_schema(empty_dsn, SCHEMA, request.param)
    with psycopg.connect(empty_dsn, autocommit=True, options=f"-c search_path={SCHEMA}") as conn:
        yield empty_dsn, conn, request.param


def _match(conn: psycopg.Connection):
    (found,) = [
        m for m in detect(read_catalog(conn, registry.builtin()), registry.builtin()) if m.kind == "river"
    ]
    return found


def test_detection_reads_river_migration_then_falls_back_to_probes(river) -> None:
    _dsn, conn, version = river
    found = _match(conn)
    assert (found.schema, found.table, found.version) == (SCHEMA, "river_job", f"migration {version}")
    assert "river_migration" in found.evidence
    conn.execute("DROP TABLE river_migration")  # e.g. River's schema applied by another migration tool
    found = _match(conn)
    assert found.version == f"migration {version}" and "probes" in found.evidence


def test_the_riverqueue_client_inserts_plain_jobs_but_its_unique_insert_needs_a_dropped_index(river) -> None:
    """riverqueue 0.7 on today's schema: insert works; unique insert targets the (kind, unique_key)
    index that migration 6 dropped, so it fails on 6 and 7 (QUEUE_FRAMEWORKS.md)."""
    import riverqueue
    import sqlalchemy.exc

    dsn, _conn, _ = river
    client, engine = river_client(dsn, SCHEMA)
    try:
        result = client.insert(Args(1), riverqueue.InsertOpts(queue="emails"))
        assert (result.job.state, result.job.queue) == (riverqueue.JobState.AVAILABLE, "emails")
        with pytest.raises(sqlalchemy.exc.ProgrammingError, match="ON CONFLICT"):
            client.insert(Args(2), riverqueue.InsertOpts(unique_opts=riverqueue.UniqueOpts(by_args=True)))
    finally:
        engine.dispose()


BULK = """
INSERT INTO river_job (state, queue, kind, args, max_attempts, priority, scheduled_at, attempt, attempted_at,
                       attempted_by, finalized_at)
SELECT %(state)s::river_job_state, %(queue)s, 'sort', jsonb_build_object('n', n), 25, 1 + n %% 4,
       now() + make_interval(secs => %(delay)s), %(attempt)s,
       CASE WHEN %(attempt)s > 0 THEN now() END, CASE WHEN %(attempt)s > 0 THEN ARRAY[%(client)s] END,
       CASE WHEN %(state)s IN ('completed', 'discarded', 'cancelled') THEN now() END
FROM generate_series(1, %(n)s) n
"""
TRUTH = """
SELECT queue, CASE state::text
    WHEN 'available' THEN CASE WHEN scheduled_at <= now() THEN 'ready' ELSE 'scheduled' END
    WHEN 'scheduled' THEN 'scheduled' WHEN 'retryable' THEN 'scheduled'
    WHEN 'running' THEN CASE WHEN attempted_at < now() - interval '1 hour' THEN 'stuck' ELSE 'running' END
    WHEN 'discarded' THEN 'dead' WHEN 'completed' THEN 'done' ELSE state::text END, count(*)
FROM river_job GROUP BY 1, 2
"""


def bulk(
    conn: psycopg.Connection, queue: str, state: str, n: int, *, delay: float = -1, attempt: int = 0
) -> None:
    params = {"state": state, "queue": queue, "n": n, "delay": delay, "attempt": attempt, "client": CLIENT_ID}
    conn.execute(BULK, params)


def test_counts_equal_ground_truth_above_ten_thousand_jobs(river) -> None:
    dsn, conn, _ = river
    bulk(conn, "bulk", "available", 12_000)
    bulk(conn, "bulk", "available", 300, delay=600)  # available but not due yet: scheduled
    bulk(conn, "bulk", "scheduled", 10_500, delay=3600)
    bulk(conn, "bulk", "retryable", 40, delay=20)
    bulk(conn, "bulk", "completed", 11_000, attempt=1)
    bulk(conn, "bulk", "discarded", 10_200, attempt=25)
    bulk(conn, "bulk", "cancelled", 7)
    bulk(conn, "bulk", "pending", 3)
    bulk(conn, "small", "running", 5, attempt=1)
    conn.execute(
        "UPDATE river_job SET attempted_at = now() - interval '2 hours' WHERE queue = 'small' AND id % 2 = 0"
    )
    insert(dsn, SCHEMA, "small", 4)  # through River's own insert client
    truth = Counter({(q, s): n for q, s, n in conn.execute(TRUTH).fetchall()})
    assert truth[("bulk", "ready")] == 12_000 and truth[("bulk", "scheduled")] == 10_840
    assert_counts_match(collect(dsn, "river", count_cap=50_000), truth, 50_000)  # all exact at the poll
    assert_counts_match(collect(dsn, "river"), truth, 500)  # the dashboard's cap: lower bounds above it
    settled = collect(dsn, "river", settle=True)  # then the background's exact counts
    assert_counts_match(settled, truth, 500)
    assert counts(settled) == truth  # the dashboard's cap: >500 flagged


def _running(conn: psycopg.Connection, minutes_ago: float, *, attempt_max: int = 25) -> int:
    insert_id = conn.execute(
        "INSERT INTO river_job (queue, kind, args, max_attempts) VALUES ('work', 'sort', '{}', %s)"
        " RETURNING id",
        (attempt_max,),
    ).fetchone()[0]  # type: ignore[index]
    (got,) = claim(conn, "work", 1)
    assert got == insert_id
    conn.execute(
        "UPDATE river_job SET attempted_at = now() - make_interval(mins => %s) WHERE id = %s",
        (minutes_ago, got),
    )
    return got


def test_stuck_is_the_job_rescuer_horizon(river, monkeypatch: pytest.MonkeyPatch) -> None:
    dsn, conn, _ = river
    fresh, stuck = _running(conn, 59), _running(conn, 61)
    snap = collect(dsn, "river")
    assert [lease.id for lease in snap.stuck.rows] == [stuck]
    assert [lease.id for lease in snap.leases.rows] == [fresh]
    assert {lease.locked_by for lease in snap.leases.rows} == {CLIENT_ID}
    assert "JobRescuer" in snap.stuck_rule and "3600 s" in snap.stuck_rule
    (target,) = find_queues(dsn, kind="river")
    assert target.model.stuck_rule == snap.stuck_rule
    monkeypatch.setenv("PGQ_TOP_RIVER_RESCUE_AFTER", "1800")  # a client with a 30 min horizon
    snap = collect(dsn, "river")
    assert sorted(lease.id for lease in snap.stuck.rows) == sorted([fresh, stuck])
    assert "1800 s" in snap.stuck_rule


def job(conn: psycopg.Connection, job_id: int) -> dict:
    return row(conn, "SELECT * FROM river_job WHERE id = %s", job_id)


def test_retry_is_river_job_retry_and_refuses_changed_rows(river, capsys: pytest.CaptureFixture[str]) -> None:
    dsn, conn, _ = river
    bulk(conn, "mail", "discarded", 3, attempt=25)
    a, b, c = (r[0] for r in conn.execute("SELECT id FROM river_job ORDER BY id").fetchall())
    conn.execute("UPDATE river_job SET attempt = 3 WHERE id = %s", (b,))  # attempts left: max stays
    before = {i: job(conn, i) for i in (a, b)}
    code, out, _ = cli(capsys, "retry", "--dsn", dsn, "--kind", "river", "--ids", f"{a},{b}", "--yes")
    assert code == EXIT_OK and "retried 2" in out
    for i, max_attempts in ((a, 26), (b, 25)):
        after = job(conn, i)
        assert after["scheduled_at"] > datetime.now(timezone.utc) - timedelta(seconds=30)
        expected = {**before[i], "state": "available", "finalized_at": None, "max_attempts": max_attempts}
        assert after == {**expected, "scheduled_at": after["scheduled_at"]}
    # a plan made while c was discarded, run after River itself retried it, leaves it alone
    with Actions(dsn, find_queues(dsn, kind="river")[0].model) as actions:
        plan = actions.plan(ActionKind.RETRY, [c])
        assert plan.count == 1 and "JobRetry" in plan.description
        conn.execute("UPDATE river_job SET state = 'available', finalized_at = NULL WHERE id = %s", (c,))
        seen = job(conn, c)
        assert actions.execute(plan).changed == 0
    assert job(conn, c) == seen
    code, _, err = cli(capsys, "retry", "--dsn", dsn, "--kind", "river", "--ids", str(c), "--yes")
    assert code == EXIT_REFUSED and "nothing to retry" in err


def test_cancel_is_river_job_cancel_with_its_notify(river, capsys: pytest.CaptureFixture[str]) -> None:
    dsn, conn, _ = river
    insert(dsn, SCHEMA, "mail", 1, at=datetime.now(timezone.utc) + timedelta(hours=1))
    insert(dsn, SCHEMA, "mail", 1)
    scheduled, available = (r[0] for r in conn.execute("SELECT id FROM river_job ORDER BY id").fetchall())
    running = _running(conn, 1)
    before = job(conn, scheduled)
    with psycopg.connect(dsn, autocommit=True) as listener:
        listener.execute(f'LISTEN "{SCHEMA}.river_control"')
        ids = f"{scheduled},{running}"
        code, out, _ = cli(capsys, "cancel", "--dsn", dsn, "--kind", "river", "--ids", ids, "--yes")
        assert code == EXIT_OK and "cancelled 1" in out
        (note,) = list(listener.notifies(timeout=2, stop_after=1))
    assert json.loads(note.payload) == {"action": "cancel", "job_id": scheduled, "queue": "mail"}
    after = job(conn, scheduled)
    stamp = after["metadata"].pop("cancel_attempted_at")
    assert datetime.fromisoformat(stamp.replace("Z", "+00:00")) > datetime.now(timezone.utc) - timedelta(
        minutes=1
    )
    assert after["finalized_at"] is not None
    assert after == {**before, "state": "cancelled", "finalized_at": after["finalized_at"]}
    assert job(conn, running)["state"] == "running"  # a running job's cancel is River's client's job
    assert job(conn, available)["state"] == "available"


def test_rescue_is_the_job_rescuer_transition(river, capsys: pytest.CaptureFixture[str]) -> None:
    dsn, conn, _ = river
    retried, last, cancelling, fresh = (
        _running(conn, 90),
        _running(conn, 90, attempt_max=1),
        _running(conn, 90),
        _running(conn, 5),
    )
    conn.execute(
        "UPDATE river_job SET metadata = jsonb_build_object('cancel_attempted_at', '2026-11-30T10:00:00Z')"
        " WHERE id = %s",
        (cancelling,),
    )
    code, out, _ = cli(capsys, "requeue", "--dsn", dsn, "--kind", "river", "--stuck", "--yes")
    assert code == EXIT_OK and "requeued 3" in out
    now = datetime.now(timezone.utc)
    r = job(conn, retried)
    assert (r["state"], r["finalized_at"], r["metadata"]) == ("retryable", None, {"river:rescue_count": 1})
    assert timedelta(seconds=0.89) <= r["scheduled_at"] - now <= timedelta(seconds=1.1)  # (0 errors + 1)^4 s
    assert [(e["attempt"], e["error"], e["trace"]) for e in r["errors"]] == [
        (1, "Stuck job rescued by JobRescuer", "")
    ]
    d = job(conn, last)
    assert (d["state"], d["finalized_at"] is not None) == ("discarded", True)
    assert job(conn, cancelling)["state"] == "cancelled"
    assert job(conn, fresh)["state"] == "running"


def test_snapshot_json_kind_and_read_only(river, capsys: pytest.CaptureFixture[str]) -> None:
    dsn, conn, _ = river
    bulk(conn, "mail", "discarded", 1, attempt=25)
    snap = snapshot_json(capsys, "--dsn", dsn)
    assert (snap["kind"], snap["target"].startswith("river migration")) == ("river", True)
    assert "JobRescuer" in snap["stuck_rule"]
    code, _, err = cli(capsys, "--read-only", "retry", "--dsn", dsn, "--dead", "--yes")
    assert code == EXIT_REFUSED and "read-only" in err
    assert conn.execute("SELECT state::text FROM river_job").fetchone()[0] == "discarded"  # type: ignore[index]


def test_every_poll_statement_is_served_by_an_index(river) -> None:
    """No count, lease or dead-list read needs a sequential scan of the framework's big tables."""
    dsn, conn, _ = river
    (target,) = find_queues(dsn, kind="river")
    assert seq_scanned(conn, target.model) & {"river_job"} == set()
