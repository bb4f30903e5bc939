"""Wait-time and run-time percentiles per queue (issue #33 item 4), against the truth measured by the
test's own workers: pgq-top's worker pool (one worker, batch 1, a handler that records when it
started and then works 20 ms) fed at 100 jobs/s for 5 s, twice what it can drain, so the jobs wait
from 0 to a few seconds. The monitor's p95 (from the queue's own started_at - run_at, read by the
latency pass) is within 10% of the p95 of the handlers' own start times. Figures that cannot be
taken are null with a reason, never 0."""

from __future__ import annotations

import time

import psycopg
import pytest
from monitor_support import pgq_monitor

from pgq_tui.cli import main
from pgq_tui.exporter.latency import latency_families
from pgq_tui.monitor.latency import NO_ROWS, NOT_LANDED, queue_latency
from pgq_tui.monitor.snapshot import APPROXIMATE, STALE, UNKNOWN, UNSUPPORTED, Snapshot
from pgq_tui.queue.jobqueue import JobQueue
from pgq_tui.queue.pool import WorkerPool
from pgq_tui.queue.worker import WorkerConfig

RATE, SECONDS, WORK_MS = 100, 5.0, 20
GAP = " (pgq-top's workers keep done jobs only with --keep)"  # the pgq dialect's latency_gap


def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks, as PostgreSQL's percentile_cont."""
    ordered = sorted(values)
    at = q * (len(ordered) - 1)
    lo = int(at)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (at - lo)


def _feed(dsn: str, queue: str) -> int:
    """One job every 1/RATE s for SECONDS, each its own INSERT (run_at = its now())."""
    n = 0
    with JobQueue(dsn) as q:
        start = time.monotonic()
        while (elapsed := time.monotonic() - start) < SECONDS:
            q.enqueue(queue, [{"n": n, "ms": WORK_MS}])
            n += 1
            time.sleep(max(0.0, start + n / RATE - time.monotonic()))
        assert elapsed >= SECONDS
    return n


def _exported(snap: Snapshot, p95: float, fed: int) -> None:
    """The exporter's gauges are the Snapshot's figures (a quantile label, a window label)."""

    class Outcome:  # what the exporter reads of a fleet outcome
        table = "public.jobs"

    samples = {
        (f.name, tuple(sorted(s.labels.items()))): s.value
        for f in latency_families([(Outcome(), snap)])  # type: ignore[list-item]
        for s in f.samples
    }
    who = {"kind": "pgq", "target": "public.jobs", "queue": "feed"}
    key = tuple(sorted({**who, "quantile": "0.95", "window": "5m"}.items()))
    assert samples[("pgq_queue_wait_seconds", key)] == p95
    assert samples[("pgq_queue_latency_jobs", tuple(sorted({**who, "window": "1h"}.items())))] == fed
    assert ("pgq_queue_run_max_seconds", tuple(sorted({**who, "window": "5m"}.items()))) in samples


def _checked(dsn: str, capsys: pytest.CaptureFixture[str], true_p95: float) -> None:
    """`check --wait-p95`: WARNING above it, CRITICAL above --wait-p95-crit, OK under both."""
    base = ["check", "--dsn", dsn, "--wait", "20"]
    capsys.readouterr()
    assert main([*base, "--wait-p95", f"{true_p95 / 2:g}"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("PGQ WARNING") and "p95 wait" in out and "'wait_p95'=" in out, out
    assert main([*base, "--wait-p95-crit", f"{true_p95 / 2:g}"]) == 2
    assert "PGQ CRITICAL" in capsys.readouterr().out
    assert main([*base, "--wait-p95", f"{true_p95 * 2:g}"]) == 0
    capsys.readouterr()


def test_wait_p95_is_within_ten_percent_of_the_workers_truth(
    crash_env: str, capsys: pytest.CaptureFixture[str]
) -> None:
    dsn = crash_env
    config = WorkerConfig(conninfo=dsn, queues=("feed",), handler="crash_handler:record", batch=1, keep=True)
    pool = WorkerPool(config, concurrency=1, reap_interval=0).start()
    try:
        time.sleep(2.0)  # the worker process is up (spawned) before the feed starts
        fed = _feed(dsn, "feed")
        deadline = time.monotonic() + 60
        with psycopg.connect(dsn, autocommit=True) as conn:
            while conn.execute("SELECT count(*) FROM jobs WHERE status = 'done'").fetchone()[0] < fed:
                assert time.monotonic() < deadline, "the pool did not drain the feed"
                time.sleep(0.2)
            truth = [
                float(w)
                for (w,) in conn.execute(
                    "SELECT extract(epoch FROM min(r.started_at) - j.run_at) FROM handler_runs r"
                    " JOIN jobs j ON j.id = r.job_id GROUP BY j.id, j.run_at"
                )
            ]
    finally:
        pool.stop()
    assert len(truth) == fed
    true_p95, true_max = percentile(truth, 0.95), max(truth)
    assert true_p95 > 1.0, f"the feed did not build a backlog (p95 {true_p95:.3f} s)"
    monitor = pgq_monitor(dsn)
    try:
        first = monitor.collect()
        assert monitor.settle(30)
        snap = monitor.collect()
    finally:
        monitor.close()
    spans = queue_latency(snap, "feed")
    print(f"fed {fed}; truth p95 {true_p95:.3f} s max {true_max:.3f} s; monitor {spans['5m'].wait}")
    for span in ("5m", "1h"):
        got = spans[span]
        assert got.figure.accuracy == STALE and got.figure.as_of is not None, got.figure
        assert got.jobs == fed and got.wait is not None and got.run is not None
        assert got.wait.p95 is not None and abs(got.wait.p95 - true_p95) <= 0.10 * true_p95, (
            got.wait,
            true_p95,
        )
        assert got.wait.max is not None and abs(got.wait.max - true_max) <= 0.10 * true_max
        assert got.run.p50 is not None and WORK_MS / 1000 <= got.run.p50 < 10 * WORK_MS / 1000
    assert Snapshot.from_dict(snap.to_dict()) == snap  # the JSON carries every figure back
    _exported(snap, spans["5m"].wait.p95, fed)  # type: ignore[union-attr]
    _checked(dsn, capsys, true_p95)
    # the first poll, before the pass landed, said so: unknown, not 0
    early = queue_latency(first, "feed")["5m"]
    assert early.wait is None and early.figure.accuracy in (UNKNOWN, STALE)
    if early.figure.accuracy == UNKNOWN:
        assert early.figure.reason == NOT_LANDED


def test_unknown_percentiles_are_null_with_a_reason(dsn: str) -> None:
    with JobQueue(dsn) as q:
        q.enqueue("idle", [{"n": 1}])  # waiting, nothing finished
    monitor = pgq_monitor(dsn)
    try:
        monitor.collect()
        assert monitor.settle(30)
        snap = monitor.collect()
    finally:
        monitor.close()
    idle = queue_latency(snap, "idle")["5m"]
    assert (idle.wait, idle.run, idle.jobs) == (None, None, 0)
    assert idle.figure.accuracy == UNKNOWN and idle.figure.reason == NO_ROWS.format(span="5m") + GAP
    data = snap.to_dict()["latency"]  # the JSON: null and the reason for each queue and span
    assert data["reason"] is None and data["as_of"] is not None
    [idle_json] = data["queues"]
    assert [(s["span"], s["wait"], s["figure"]["reason"]) for s in idle_json["spans"]] == [
        ("5m", None, NO_ROWS.format(span="5m") + GAP),
        ("1h", None, NO_ROWS.format(span="1h") + GAP),
    ]
    with psycopg.connect(dsn, autocommit=True) as conn:  # a table `pgq-top init` has not upgraded
        conn.execute("ALTER TABLE jobs DROP COLUMN started_at")
    monitor = pgq_monitor(dsn)
    try:
        snap = monitor.collect()
    finally:
        monitor.close()
    old = queue_latency(snap, "idle")["1h"]
    assert old.wait is None and old.figure.accuracy == UNSUPPORTED
    assert "started_at" in (old.figure.reason or "") and "pgq-top init" in (old.figure.reason or "")
    assert old.figure.accuracy != APPROXIMATE
