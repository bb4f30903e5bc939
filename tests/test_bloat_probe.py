"""The claim-cost probe on a real server: it locks no row a claim wants (a concurrent claim loop sees
no lock waits), it writes nothing, it runs under --read-only, and it sees the bloat coming."""

from __future__ import annotations

import threading
import time

import psycopg
from monitor_support import pgq_monitor
from psycopg import sql

from pgq_tui.dialects.pgq.statements import monitor_sql
from pgq_tui.jobtable import statements as qst
from pgq_tui.monitor.collect import Monitor
from pgq_tui.monitor.probe import EXPLAIN, run_probe
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.queue import JobQueue


def probed_again(monitor: Monitor, snap: Snapshot, timeout: float = 15.0) -> Snapshot:
    """Poll until a newer probe lands: the probe backs off to at most 2% of the time, so how soon
    depends on how long the last one took on this (shared) machine."""
    seen = len(snap.bloat.probe.history) if snap.bloat else 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.1)
        snap = monitor.collect()
        if snap.bloat is not None and len(snap.bloat.probe.history) > seen:
            return snap
    raise AssertionError("no new probe")


def _probe_sql() -> sql.Composed:
    probe = monitor_sql("claim_probe")
    return sql.SQL(probe).format(jobs=sql.Identifier("public", "jobs"))


def test_probe_is_the_claims_own_candidate_scan() -> None:
    """The probe must cost what a claim costs: same predicate, same order (so the same index walk)."""
    probe = monitor_sql("claim_probe")
    body = " ".join(line.strip() for line in probe.splitlines() if not line.startswith("--"))
    claim = " ".join(qst.CLAIM.split())
    for part in (
        "WHERE status = 'pending' AND queue = %(queue)s AND run_at <= now()",
        "ORDER BY priority DESC, run_at, id",
    ):
        assert part in body and part in claim
    assert "LIMIT 1" in body and "FOR UPDATE" not in body


def test_probe_holds_no_lock_a_claim_waits_for(dsn: str, queue: JobQueue, sql: psycopg.Connection) -> None:
    queue.enqueue("q", [{"n": i} for i in range(5)])
    first = queue.conn.execute("SELECT min(id) FROM jobs").fetchone()[0]
    prober = psycopg.connect(dsn, autocommit=True)
    try:
        # the probe's transaction, held open on purpose (the real one commits at once)
        with prober.transaction():
            prober.execute("SET TRANSACTION READ ONLY")
            plan = prober.execute(EXPLAIN + _probe_sql(), {"queue": "q"}).fetchone()[0]
            assert plan[0]["Plan"]["Actual Rows"] == 1
            locks = sql.execute(
                "SELECT locktype, mode FROM pg_locks WHERE pid = %s", (prober.info.backend_pid,)
            ).fetchall()
            assert {m for _, m in locks} <= {"AccessShareLock", "ExclusiveLock"}  # Exclusive: its own vxid
            assert {t for t, m in locks if m == "ExclusiveLock"} == {"virtualxid"}
            assert not any(t in ("tuple", "transactionid") for t, _ in locks)
            # a claim, meanwhile, gets the very row the probe found, without waiting
            with JobQueue(dsn, worker_id="claimer") as claimer:
                claimer.conn.execute("SET lock_timeout = '100ms'")
                jobs = claimer.claim("q", limit=1)
            assert [j.id for j in jobs] == [first]
    finally:
        prober.close()


def test_concurrent_claim_loop_sees_no_lock_waits(dsn: str, queue: JobQueue) -> None:
    queue.enqueue("q", [{"n": i} for i in range(3000)])
    stop = threading.Event()
    claimed: list[int] = []
    errors: list[BaseException] = []
    claimer_pid: list[int] = []

    def claim_loop() -> None:
        try:
            with JobQueue(dsn, worker_id="loop") as q:
                q.conn.execute("SET lock_timeout = '200ms'")
                claimer_pid.append(q.conn.info.backend_pid)
                while not stop.is_set():
                    jobs = q.claim("q", limit=1)
                    if not jobs:
                        break
                    q.complete(jobs)
                    claimed.append(jobs[0].id)
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    waits = 0
    probes = 0
    thread = threading.Thread(target=claim_loop)
    thread.start()
    try:
        with psycopg.connect(dsn, autocommit=True) as prober, psycopg.connect(dsn, autocommit=True) as watch:
            # until both loops have done enough (a loaded machine is slower, never less strict)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and thread.is_alive() and (probes < 30 or len(claimed) < 200):
                run_probe(prober, _probe_sql(), {"queue": "q"}, at=None, dead_tuples=0)  # type: ignore[arg-type]
                probes += 1
                if claimer_pid:
                    waits += watch.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE pid = %s AND wait_event_type = 'Lock'",
                        (claimer_pid[0],),
                    ).fetchone()[0]
                    waits += watch.execute(
                        "SELECT count(*) FROM pg_locks WHERE pid = %s AND NOT granted", (claimer_pid[0],)
                    ).fetchone()[0]
    finally:
        stop.set()
        thread.join(10)
    assert not errors, errors
    assert probes >= 30 and len(claimed) >= 200
    assert waits == 0


def test_probe_writes_nothing_and_runs_read_only(dsn: str, queue: JobQueue, sql: psycopg.Connection) -> None:
    queue.enqueue("q", [{}] * 10)
    before = sql.execute("SELECT status, count(*) FROM jobs GROUP BY 1").fetchall()
    with pgq_monitor(dsn, read_only=True, probe_interval_s=0.01) as monitor:
        snap = monitor.collect()
        snap = probed_again(monitor, snap)
    assert "bloat" not in snap.errors
    assert snap.bloat is not None and snap.bloat.probe.error is None
    assert len(snap.bloat.probe.history) >= 2 and snap.bloat.probe.latest.found
    assert snap.bloat.probe.queue == "q"
    assert sql.execute("SELECT status, count(*) FROM jobs GROUP BY 1").fetchall() == before


def test_probe_sees_dead_entries_in_front_of_the_ready_jobs(
    dsn: str, queue: JobQueue, sql: psycopg.Connection
) -> None:
    """Claimed-and-deleted jobs leave dead index entries before the next ready one: the probe's
    buffers per claim climb past 4x the floor, and the verdict says so, before any vacuum."""
    sql.execute("ALTER TABLE jobs SET (autovacuum_enabled = false)")
    queue.enqueue("q", [{}] * 20_000)
    sql.execute("VACUUM ANALYZE jobs")
    with pgq_monitor(dsn, probe_interval_s=0.01) as monitor:
        healthy = monitor.collect().bloat
        assert healthy is not None and healthy.probe.level == "ok"
        with JobQueue(dsn, worker_id="drain") as q:
            # 15k dead entries in front of the ready jobs: even once scans have marked them dead
            # (LP_DEAD), a claim still walks their ~80 index leaf pages
            for _ in range(150):
                q.complete(q.claim("q", limit=100))
        sick = probed_again(monitor, monitor.collect()).bloat
    assert sick is not None
    floor, latest = sick.probe.floor, sick.probe.latest
    assert latest is not None and floor is not None
    assert latest.buffers >= 4 * floor and latest.buffers - floor >= 24, (floor, latest)
    assert sick.probe.level in ("warn", "crit")
    assert "claims are getting slower" in sick.probe.message
