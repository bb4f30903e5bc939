"""Solid Queue on its own queue_schema.rb: detection by its tables, counts above 10,000 jobs against
ground truth, the process-heartbeat stuck rule, and each action leaving exactly Solid Queue's rows."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta, timezone

import psycopg
import pytest
from dialect_cases.solid_queue import FAIL, FINISH, TRUTH, claim, enqueue, install, register
from dialect_support import (
    accuracies,
    assert_counts_match,
    cli,
    collect,
    counts,
    row,
    seq_scanned,
    snapshot_json,
)

from pgq_tui.actions import Actions
from pgq_tui.detection import find_queues
from pgq_tui.dialects import registry
from pgq_tui.dialects.contract import ActionKind
from pgq_tui.dialects.detect import detect
from pgq_tui.dialects.introspect import read_catalog
from pgq_tui.errors import EXIT_OK, EXIT_REFUSED

OVERALL = ("scheduled", "dead", "blocked")  # capped over all queues together (no queue index there)


@pytest.fixture
def sq(empty_dsn: str):
    install(empty_dsn)
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        yield empty_dsn, conn


def utc_now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def truth(conn: psycopg.Connection) -> Counter[tuple[str, str]]:
    return Counter((q, s) for _, q, s in conn.execute(TRUTH).fetchall())


def test_detection_needs_every_execution_table(sq) -> None:
    _, conn = sq
    dialects = registry.builtin()
    (m,) = [m for m in detect(read_catalog(conn, dialects), dialects) if m.kind == "solid-queue"]
    assert (m.schema, m.table, m.version) == ("public", "solid_queue_jobs", "1.0+")
    conn.execute("DROP TABLE solid_queue_processes")
    assert [m for m in detect(read_catalog(conn, dialects), dialects) if m.kind == "solid-queue"] == []


def test_counts_equal_ground_truth_above_ten_thousand_jobs(sq) -> None:
    dsn, conn = sq
    worker, silent = register(conn, "w1", 4101), register(conn, "w2", 4102, age=400)
    enqueue(conn, "default", 12_000)
    enqueue(conn, "default", 10_100, delay=3600)
    enqueue(conn, "mailers", 11_200)
    for _ in range(2):  # claimed then finished or failed, in batches as workers do
        conn.execute(FINISH, (claim(conn, "mailers", 5_500, worker),))
    conn.execute(FAIL, (claim(conn, "mailers", 100, worker),))
    claim(conn, "mailers", 3, worker)
    claim(conn, "mailers", 2, silent)
    enqueue(conn, "billing", 4, key="ReportJob/7")
    want = truth(conn)
    assert (want[("default", "ready")], want[("mailers", "done")]) == (12_000, 11_000)
    assert_counts_match(collect(dsn, "solid-queue", count_cap=50_000), want, 50_000, OVERALL)
    first = collect(dsn, "solid-queue")  # the dashboard's cap, 500
    assert_counts_match(first, want, 500, OVERALL)
    # scheduled executions have no queue index: 501 rows read over all queues, a lower bound
    assert accuracies(first)[("default", "scheduled")] == "at_least"
    settled = collect(dsn, "solid-queue", settle=True)
    assert_counts_match(settled, want, 500, OVERALL)
    assert counts(settled) == want


def test_stuck_is_a_silent_or_vanished_process(sq, monkeypatch: pytest.MonkeyPatch) -> None:
    dsn, conn = sq
    alive, quiet, silent, gone = (
        register(conn, f"w{i}", 4100 + i, age=a) for i, a in enumerate((5, 240, 301, 0))
    )
    enqueue(conn, "default", 4)
    jobs = {p: claim(conn, "default", 1, p)[0] for p in (alive, quiet, silent, gone)}
    conn.execute("DELETE FROM solid_queue_processes WHERE id = %s", (gone,))
    snap = collect(dsn, "solid-queue")
    assert sorted(lease.id for lease in snap.stuck.rows) == sorted([jobs[silent], jobs[gone]])
    assert sorted(lease.id for lease in snap.leases.rows) == sorted([jobs[alive], jobs[quiet]])
    assert {lease.locked_by for lease in snap.leases.rows} == {
        "Worker w0 pid 4100 on app-1",
        "Worker w1 pid 4101 on app-1",
    }
    assert "process_alive_threshold" in snap.stuck_rule and "300 s" in snap.stuck_rule
    monkeypatch.setenv("PGQ_TOP_SOLID_QUEUE_ALIVE_THRESHOLD", "60")
    assert len(collect(dsn, "solid-queue").stuck.rows) == 3


def job(conn: psycopg.Connection, job_id: int) -> dict:
    return row(conn, "SELECT * FROM solid_queue_jobs WHERE id = %s", job_id)


def executions(conn: psycopg.Connection, job_id: int) -> dict[str, int]:
    tables = ("ready", "scheduled", "claimed", "failed", "blocked")
    return {
        t: conn.execute(
            f"SELECT count(*) FROM solid_queue_{t}_executions WHERE job_id = %s", (job_id,)
        ).fetchone()[0]  # type: ignore[index]
        for t in tables
    }


def test_retry_is_failed_execution_retry(sq, capsys: pytest.CaptureFixture[str]) -> None:
    dsn, conn = sq
    worker = register(conn, "w1", 4101)
    enqueue(conn, "default", 3, priority=3)
    due, later, changed = claim(conn, "default", 3, worker)
    conn.execute(FAIL, ([due, later, changed],))
    conn.execute(
        "UPDATE solid_queue_jobs SET scheduled_at = %s WHERE id = %s", (utc_now() + timedelta(hours=2), later)
    )
    conn.execute(
        'UPDATE solid_queue_jobs SET arguments = (arguments::jsonb || \'{"executions": 3,'
        ' "exception_executions": {"[RuntimeError]": 2}}\')::text WHERE id IN (%s, %s)',
        (due, later),
    )
    before = {i: job(conn, i) for i in (due, later)}
    code, out, _ = cli(
        capsys, "retry", "--dsn", dsn, "--kind", "solid-queue", "--ids", f"{due},{later}", "--yes"
    )
    assert code == EXIT_OK and "retried 2" in out
    for i, table in ((due, "ready"), (later, "scheduled")):
        after = job(conn, i)
        args = json.loads(after.pop("arguments"))
        assert (args["executions"], args["exception_executions"], args["arguments"]) == (
            0,
            {},
            [json.loads(before[i]["arguments"])["arguments"][0]],
        )
        assert after["updated_at"] >= before[i]["updated_at"]
        assert after == {
            **{k: v for k, v in before[i].items() if k != "arguments"},
            "updated_at": after["updated_at"],
        }
        assert executions(conn, i) == {
            **dict.fromkeys(("ready", "scheduled", "claimed", "failed", "blocked"), 0),
            table: 1,
        }
    ready = row(conn, "SELECT queue_name, priority FROM solid_queue_ready_executions WHERE job_id = %s", due)
    assert ready == {"queue_name": "default", "priority": 3}
    sched = row(conn, "SELECT scheduled_at FROM solid_queue_scheduled_executions WHERE job_id = %s", later)
    assert sched["scheduled_at"] == before[later]["scheduled_at"]
    with Actions(dsn, find_queues(dsn, kind="solid-queue")[0].model) as actions:
        plan = actions.plan(ActionKind.RETRY, [changed])
        assert plan.count == 1 and "FailedExecution#retry" in plan.description
        conn.execute(
            "DELETE FROM solid_queue_failed_executions WHERE job_id = %s", (changed,)
        )  # retried meanwhile
        conn.execute(
            "INSERT INTO solid_queue_ready_executions (job_id, queue_name, priority, created_at)"
            " VALUES (%s, 'default', 3, now() AT TIME ZONE 'UTC')",
            (changed,),
        )
        assert actions.execute(plan).changed == 0
    assert executions(conn, changed)["ready"] == 1


def test_a_concurrency_limited_failed_job_is_not_retried(sq, capsys: pytest.CaptureFixture[str]) -> None:
    dsn, conn = sq
    enqueue(conn, "billing", 1, key="ReportJob/7")
    (blocked,) = (r[0] for r in conn.execute("SELECT job_id FROM solid_queue_blocked_executions").fetchall())
    conn.execute("DELETE FROM solid_queue_blocked_executions")
    conn.execute(
        "INSERT INTO solid_queue_failed_executions (job_id, error, created_at) VALUES (%s, '{}', now())",
        (blocked,),
    )
    code, _, err = cli(capsys, "retry", "--dsn", dsn, "--kind", "solid-queue", "--dead", "--yes")
    assert code == EXIT_REFUSED and "concurrency key" in err
    assert executions(conn, blocked)["failed"] == 1


def test_discard_deletes_the_failed_job_and_never_a_claimed_one(
    sq, capsys: pytest.CaptureFixture[str]
) -> None:
    dsn, conn = sq
    worker = register(conn, "w1", 4101)
    enqueue(conn, "default", 2)
    failed, claimed = claim(conn, "default", 2, worker)
    conn.execute(FAIL, ([failed],))
    code, out, _ = cli(
        capsys, "discard", "--dsn", dsn, "--kind", "solid-queue", "--ids", f"{failed},{claimed}", "--yes"
    )
    assert code == EXIT_OK and "discarded 1" in out
    assert conn.execute("SELECT array_agg(id) FROM solid_queue_jobs").fetchone()[0] == [claimed]  # type: ignore[index]
    assert conn.execute("SELECT count(*) FROM solid_queue_failed_executions").fetchone()[0] == 0  # type: ignore[index]
    assert executions(conn, claimed)["claimed"] == 1


def failure(conn: psycopg.Connection, job_id: int) -> dict:
    return json.loads(
        conn.execute(
            "SELECT error FROM solid_queue_failed_executions WHERE job_id = %s", (job_id,)
        ).fetchone()[0]  # type: ignore[index]
    )


def test_requeue_fails_stuck_claims_as_solid_queues_supervisor_does(
    sq, capsys: pytest.CaptureFixture[str]
) -> None:
    """Solid Queue 1.x's supervisor fails a dead process's claims (Process#prune ->
    ClaimedExecution.fail_all_with(ProcessPrunedError)) and the claims of a vanished process
    (ProcessMissingError); it never re-dispatches them. pgq-top's requeue makes the same transition."""
    dsn, conn = sq
    alive, silent = register(conn, "w1", 4101), register(conn, "w2", 4102, age=900)
    vanished = register(conn, "w3", 4103)
    enqueue(conn, "default", 3, priority=2)
    (running,), (stuck,) = claim(conn, "default", 1, alive), claim(conn, "default", 1, silent)
    (orphan,) = claim(conn, "default", 1, vanished)
    conn.execute("DELETE FROM solid_queue_processes WHERE id = %s", (vanished,))
    heartbeat = conn.execute(
        "SELECT to_char(last_heartbeat_at, 'YYYY-MM-DD HH24:MI:SS') FROM solid_queue_processes WHERE id = %s",
        (silent,),
    ).fetchone()[0]  # type: ignore[index]
    before = job(conn, stuck)
    code, out, _ = cli(capsys, "requeue", "--dsn", dsn, "--kind", "solid-queue", "--stuck", "--yes")
    assert code == EXIT_OK and "failed 2 of 2" in out, out
    assert job(conn, stuck) == before  # the job row itself is untouched, as fail_all_with leaves it
    for job_id in (stuck, orphan):
        assert executions(conn, job_id) == {
            "ready": 0,
            "scheduled": 0,
            "claimed": 0,
            "failed": 1,
            "blocked": 0,
        }
    assert failure(conn, stuck) == {
        "exception_class": "SolidQueue::Processes::ProcessPrunedError",
        "message": f"Process was found dead and pruned (last heartbeat at: {heartbeat} UTC)",
        "backtrace": None,
    }
    assert failure(conn, orphan)["exception_class"] == "SolidQueue::Processes::ProcessMissingError"
    assert executions(conn, running)["claimed"] == 1
    # the dead list shows them as Solid Queue's dashboard would, and retry runs them again
    snap = snapshot_json(capsys, "--dsn", dsn)
    assert {r["last_error"].split(":")[0] for r in snap["dead"]["rows"]} == {"SolidQueue"}


def test_requeue_rechecks_the_heartbeat_on_the_locked_process_row(
    sq, capsys: pytest.CaptureFixture[str]
) -> None:
    """A process whose heartbeat is being written (its row locked, as Process#heartbeat locks it) or
    was written after the plan is alive: its claim is left alone."""
    dsn, conn = sq
    silent = register(conn, "w2", 4102, age=900)
    enqueue(conn, "default", 1)
    (stuck,) = claim(conn, "default", 1, silent)
    with psycopg.connect(dsn) as beating:  # Process#heartbeat: with_lock { touch(:last_heartbeat_at) }
        beating.execute("SELECT * FROM solid_queue_processes WHERE id = %s FOR UPDATE", (silent,))
        beating.execute(
            "UPDATE solid_queue_processes SET last_heartbeat_at = now() AT TIME ZONE 'UTC' WHERE id = %s",
            (silent,),
        )
        code, out, _ = cli(
            capsys, "requeue", "--dsn", dsn, "--kind", "solid-queue", "--ids", str(stuck), "--yes"
        )
        assert code == EXIT_OK and "failed 0 of 1" in out and "left alone" in out, out
        assert executions(conn, stuck)["claimed"] == 1
    code, _, err = cli(capsys, "requeue", "--dsn", dsn, "--kind", "solid-queue", "--ids", str(stuck), "--yes")
    assert code == EXIT_REFUSED and "none of the 1 selected job is stuck" in err  # it heartbeat: alive
    assert executions(conn, stuck) == {"ready": 0, "scheduled": 0, "claimed": 1, "failed": 0, "blocked": 0}


def test_snapshot_json_kind_and_read_only(sq, capsys: pytest.CaptureFixture[str]) -> None:
    dsn, conn = sq
    worker = register(conn, "w1", 4101)
    enqueue(conn, "default", 1)
    conn.execute(FAIL, (claim(conn, "default", 1, worker),))
    snap = snapshot_json(capsys, "--dsn", dsn)
    assert (snap["kind"], snap["target"]) == ("solid-queue", "solid-queue 1.0+ · public.solid_queue_jobs")
    assert snap["dead"]["rows"][0]["last_error"] == "RuntimeError: boom"
    code, _, err = cli(capsys, "--read-only", "discard", "--dsn", dsn, "--dead", "--yes")
    assert code == EXIT_REFUSED and "read-only" in err
    assert conn.execute("SELECT count(*) FROM solid_queue_failed_executions").fetchone()[0] == 1  # type: ignore[index]


def test_every_poll_statement_is_served_by_an_index(sq) -> None:
    """No count, lease or dead-list read needs a sequential scan of the framework's big tables (the
    in-flight claimed executions and the processes are small by nature)."""
    dsn, conn = sq
    (target,) = find_queues(dsn, kind="solid-queue")
    big = {
        "solid_queue_" + t for t in ("jobs", "ready_executions", "scheduled_executions", "failed_executions")
    }
    assert seq_scanned(conn, target.model) & big == set()
