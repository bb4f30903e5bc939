"""collect() against a real server: seeded states with known answers for every panel."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone

import psycopg
import pytest
from monitor_support import collect, pgq_monitor

from pgq_tui.errors import EXIT_SCHEMA, PgqError
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.queue import JobQueue


def ago(seconds: float) -> datetime:
    return datetime.now(timezone.utc) - timedelta(seconds=seconds)


@pytest.fixture
def seeded(dsn: str, queue: JobQueue) -> dict[str, object]:
    """Queue "a" in every state, queue "b" with a backed-off job that must not count as ready."""
    running = queue.claim("a", lease=300) if queue.enqueue("a", [{}, {}]) else []
    with JobQueue(dsn) as gone:  # this worker disconnects: its lease has no live holder
        gone.enqueue("a", [{"n": "expiring"}])
        expiring = gone.claim("a", lease=0.2)
    queue.enqueue("a", [{}], max_attempts=1)
    assert queue.fail(queue.claim("a")[0], "boom: <b>[red]x[/red]") == "failed"
    queue.enqueue("a", [{}, {}])
    assert queue.complete(queue.claim("a"), keep=True) == 2
    queue.enqueue("a", [{}] * 3, run_at=ago(100))
    queue.enqueue("a", [{}], run_at=ago(10), priority=3)
    queue.enqueue("a", [{}] * 2, run_at=ago(-3600))
    queue.enqueue("b", [{}])
    assert queue.fail(queue.claim("b")[0], "retry later", backoff=3600) == "pending"
    queue.enqueue("b", [{}], run_at=ago(5))
    time.sleep(1.1)  # the 0.2 s lease expires, and every counter bucket so far is a complete second
    return {"running": running, "expiring": expiring, "worker": queue.worker_id,
            "pid": queue.conn.info.backend_pid, "gone": expiring[0].locked_by}  # fmt: skip


def test_queue_counts_and_run_at_aware_latency(dsn: str, seeded: dict[str, object]) -> None:
    snap = collect(dsn)
    assert snap.errors == {}
    a, b = snap.queues
    assert (a.queue, a.ready, a.scheduled, a.running, a.stuck, a.dead, a.done) == ("a", 4, 2, 2, 1, 1, 2)
    assert 99 <= a.oldest_ready_age_s < 105 and not a.approximate  # type: ignore[operator]
    # the job backed off for an hour is scheduled, and does not make the queue look an hour late
    assert (b.queue, b.ready, b.scheduled, b.running, b.stuck, b.dead, b.done) == ("b", 1, 1, 0, 0, 0, 0)
    assert 4 <= b.oldest_ready_age_s < 10  # type: ignore[operator]


def test_counts_above_the_cap_are_lower_bounds_until_the_background_count(
    dsn: str, seeded: dict[str, object]
) -> None:
    with pgq_monitor(dsn, count_cap=2) as monitor:
        snap = monitor.collect()
        a = snap.queues[0]
        assert (a.ready, a.accuracy("ready")) == (2, "at_least")  # "≥2", never a guess
        assert (a.running, a.stuck) == (2, 1) and a.accuracy("running") == a.accuracy("stuck") == "exact"
        assert snap.counts is not None and snap.counts.background == "waiting"
        assert monitor.settle(10)
        snap = monitor.collect()
    a = snap.queues[0]
    assert (a.ready, a.accuracy("ready"), a.scheduled, a.accuracy("scheduled")) == (4, "stale", 2, "exact")
    assert a.figures["ready"].as_of <= snap.server.now and a.figures["ready"].source == "background"
    assert snap.counts is not None and snap.counts.background == "ready" and snap.counts.cost_ms > 0


def test_leases_valid_and_expired_with_their_holders(dsn: str, seeded: dict[str, object]) -> None:
    snap = collect(dsn, lease_rows=1)
    assert snap.leases.total == 2 and len(snap.leases.rows) == 1  # capped for display, true total kept
    lease = snap.leases.rows[0]
    assert lease.id in {j.id for j in seeded["running"]}  # type: ignore[attr-defined]
    assert (
        lease.locked_by == seeded["worker"] and lease.holder_connected and lease.holder_pid == seeded["pid"]
    )
    assert 290 < lease.seconds_left <= 300 and lease.attempts == 1 and lease.max_attempts == 5
    (stuck,) = snap.stuck.rows
    assert snap.stuck.total == 1 and stuck.id == seeded["expiring"][0].id  # type: ignore[index]
    assert stuck.seconds_left < 0 and not stuck.holder_connected and stuck.holder_pid is None
    (dead,) = snap.dead.rows
    assert snap.dead.total == 1 and dead.queue == "a" and dead.last_error == "boom: <b>[red]x[/red]"


def test_throughput_counts_every_event(dsn: str, seeded: dict[str, object]) -> None:
    tp = collect(dsn).throughput
    assert sum(p.enqueued for p in tp.history) == 14 and sum(p.completed for p in tp.history) == 2
    assert sum(p.failed for p in tp.history) == 2 and sum(p.dead for p in tp.history) == 1
    assert sum(tp.queue_history["a"]) == 2 and sum(tp.queue_history["b"]) == 0
    assert tp.interval_s == 10 and len(tp.history) == 300
    # everything happened within the last 10 complete seconds
    assert tp.per_queue["a"].enqueued == pytest.approx(1.2) and tp.total.completed == pytest.approx(0.2)


def test_steady_rate_is_exact(dsn: str, sql: psycopg.Connection) -> None:
    """Counters spread over shards, 25 seconds at 100 completed/s: the rate is 100, not 90 or 110."""
    sql.execute(
        "INSERT INTO jobs_stats (queue, bucket, shard, enqueued, completed, failed, dead) "
        "SELECT 'q', date_trunc('second', now()) - s * interval '1 second', shard, 30, 25, 1, 0 "
        "FROM generate_series(0, 25) s, generate_series(0, 3) shard"
    )
    tp = collect(dsn, rate_window_s=10, history_s=60).throughput
    assert tp.total.completed == 100.0 and tp.total.enqueued == 120.0 and tp.per_queue["q"].failed == 4.0
    assert [p.completed for p in tp.history[-25:]] == [100] * 25 and tp.history[0].completed == 0
    assert [q.queue for q in collect(dsn).queues] == ["q"]  # a queue known only from its counters is listed


def test_table_health_uses_reloptions_over_settings(
    dsn: str, sql: psycopg.Connection, queue: JobQueue
) -> None:
    queue.enqueue("a", [{}] * 50)
    sql.execute("DELETE FROM jobs WHERE id IN (SELECT id FROM jobs LIMIT 10)")
    sql.execute(
        "ALTER TABLE jobs SET (autovacuum_vacuum_threshold = 123, autovacuum_vacuum_scale_factor = 0.5)"
    )
    sql.execute("ANALYZE jobs")
    t = collect(dsn).table
    assert t.table == "public.jobs" and t.total_rows_estimate == 40
    assert (t.vacuum_base_threshold, t.vacuum_scale_factor) == (123, 0.5) and t.vacuum_threshold == 143.0
    assert t.autovacuum_enabled and t.table_bytes > 0 and t.index_bytes > 0 and t.vacuum is None
    sql.execute("VACUUM jobs")
    sql.execute("ALTER TABLE jobs SET (autovacuum_enabled = false)")
    t = collect(dsn).table
    assert not t.autovacuum_enabled and t.vacuum_count >= 1 and t.last_vacuum is not None


def test_a_failing_panel_does_not_fail_the_poll(dsn: str, sql: psycopg.Connection) -> None:
    locker = psycopg.connect(dsn, application_name="test-locker")
    try:
        with pgq_monitor(dsn, lock_timeout_ms=100) as monitor:  # detected before the lock is taken
            locker.execute("LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE")
            snap = monitor.collect()
        assert {"queues", "leases", "dead", "table"} <= set(snap.errors)
        assert "lock timeout" in snap.errors["queues"]
        assert snap.queues == () and snap.leases.total is None  # not read: unknown, never 0
        # no queue listed, and still every count says it was not taken (never an empty "all zero")
        assert set(snap.unknown) == {"ready", "scheduled", "running", "stuck", "dead", "done",
                                     "oldest_ready_age_s"}  # fmt: skip
        assert all("lock timeout" in why for why in snap.unknown.values())
        assert "sessions" not in snap.errors
        idle = {s.pid: s for s in snap.sessions.idle_in_transaction}
        assert idle[locker.info.backend_pid].application == "test-locker"
    finally:
        locker.close()
    assert collect(dsn).errors == {}


def test_json_round_trip(dsn: str, seeded: dict[str, object]) -> None:
    snap = collect(dsn)
    data = json.loads(json.dumps(snap.to_dict()))
    assert list(data) == [
        "server",
        "queues",
        "leases",
        "stuck",
        "throughput",
        "table",
        "sessions",
        "errors",
        "dead",
        "counts",
        "kind",  # which queue this is (issue 11): pgq, seed-jobs, a framework...
        "target",
        "stuck_rule",
        "unsupported",
        "bloat",
        "stuck_label",
        "unknown",  # counts not taken at this poll, and why (docs/unknown-figures.md)
        "schedules",  # the kind's periodic schedules, read at most every 15 s (issue 33)
        "latency",  # wait and run percentiles per queue, a background pass's (issue 33)
    ]
    assert data["unknown"] == {}  # pgq-top's own table: every count taken
    assert set(data["queues"][0]) >= {"queue", "ready", "scheduled", "running", "stuck", "dead", "done",
                                      "oldest_ready_age_s"}  # fmt: skip
    again = Snapshot.from_dict(data)
    assert again == snap


def test_reconnects_after_the_connection_is_lost(dsn: str, sql: psycopg.Connection) -> None:
    with pgq_monitor(dsn) as monitor:
        assert monitor.pid is None  # connects lazily
        first = monitor.collect().server.monitor_pid
        assert monitor.pid == first
        sql.execute("SELECT pg_terminate_backend(%s)", (first,))
        time.sleep(0.1)
        with pytest.raises(PgqError):
            monitor.collect()
        assert monitor.pid is None
        assert monitor.collect().server.monitor_pid not in (None, first)


def test_missing_and_wrong_tables_are_schema_errors(dsn: str, sql: psycopg.Connection) -> None:
    with pytest.raises(PgqError, match="does not exist") as missing:
        collect(dsn, table="nope")
    sql.execute("CREATE TABLE wrong (id bigint, queue text)")
    with pytest.raises(PgqError, match="missing columns attempts") as wrong:
        collect(dsn, table="wrong")
    assert missing.value.exit_code == wrong.value.exit_code == EXIT_SCHEMA


def test_hostile_names(dsn: str, sql: psycopg.Connection) -> None:
    with JobQueue(dsn, 'we"ird; table', "my schema") as q:
        q.install()
        q.enqueue("[bold]q", [{}])
    snap = collect(dsn, table='we"ird; table', schema="my schema")
    assert snap.errors == {} and snap.queues[0].queue == "[bold]q" and snap.queues[0].ready == 1
    assert snap.table.table == 'my schema.we"ird; table'
