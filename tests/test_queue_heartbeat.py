"""Heartbeats: a live worker's long job is never reaped; a dead worker's job is reaped one lease after
its last heartbeat. Leases are 1 s and the reaper runs every 0.25 s, so these take seconds."""

from __future__ import annotations

import threading
import time

import psycopg

from pgq_tui.queue import JobQueue
from pgq_tui.queue.heartbeat import Heartbeat
from pgq_tui.queue.pool import WorkerPool
from pgq_tui.queue.worker import WorkerConfig

LEASE = 1.0
REAP_EVERY = 0.25


def _config(dsn: str) -> WorkerConfig:
    return WorkerConfig(
        conninfo=dsn, queues=("long",), handler="crash_handler:record", lease=LEASE, keep=True, poll=60
    )


def test_a_handler_sleeping_three_leases_runs_exactly_once_and_its_lease_is_renewed(
    crash_env: str, queue: JobQueue, sql: psycopg.Connection
) -> None:
    (job_id,) = queue.enqueue("long", [{"ms": 3000 * LEASE}])
    pool = WorkerPool(_config(crash_env), concurrency=2, reap_interval=REAP_EVERY).start()
    seen_until = set()
    try:
        deadline = time.monotonic() + 30
        while (row := sql.execute("SELECT status, locked_until FROM jobs").fetchone())[0] != "done":
            assert time.monotonic() < deadline, "the long job never finished"
            if row[0] == "running":
                seen_until.add(row[1])
            time.sleep(0.05)
    finally:
        pool.stop(timeout=10)
    runs = sql.execute("SELECT count(*) FROM handler_runs WHERE job_id = %s", (job_id,)).fetchone()[0]
    attempts, error, renewed_after = sql.execute(
        "SELECT attempts, last_error, extract(epoch FROM heartbeat_at - r.started_at)"
        " FROM jobs, handler_runs r WHERE jobs.id = %s",
        (job_id,),
    ).fetchone()
    assert runs == 1 and attempts == 1 and error is None, "a live worker's job was reaped and run again"
    assert pool.reaped == 0
    # The lease was pushed out several times while the handler ran (every lease/3), the last renewal
    # late in its 3 s.
    assert len(seen_until) >= 4, seen_until
    assert renewed_after > 2 * LEASE, renewed_after
    assert pool.counts()["completed"] == 1


def test_kill_9_mid_job_is_reaped_within_a_lease_and_a_reaper_period(
    crash_env: str, queue: JobQueue, sql: psycopg.Connection
) -> None:
    (job_id,) = queue.enqueue("long", [{"ms": 60_000}], max_attempts=1)
    pool = WorkerPool(_config(crash_env), concurrency=1, reap_interval=REAP_EVERY).start()
    try:
        deadline = time.monotonic() + 30
        # Wait for a heartbeat after the claim (heartbeat_at moves past the start of the run).
        while not sql.execute(
            "SELECT 1 FROM jobs, handler_runs r WHERE status = 'running' AND heartbeat_at > r.started_at"
        ).fetchone():
            assert time.monotonic() < deadline, "the job never started or was never renewed"
            time.sleep(0.05)
        time.sleep(2 * LEASE)
        assert sql.execute("SELECT status FROM jobs").fetchone()[0] == "running", "reaped while alive"
        assert pool.kill_worker() is not None
        killed = time.monotonic()
        while (
            status := sql.execute("SELECT status FROM jobs WHERE id = %s", (job_id,)).fetchone()[0]
        ) == "running":
            assert time.monotonic() - killed < 10, "the dead worker's job was never reaped"
            time.sleep(0.02)
        reaped_after = time.monotonic() - killed
    finally:
        pool.stop(timeout=10)
    # Its last heartbeat was at most lease/3 before the kill, its lease ran one lease past that.
    assert status == "failed"  # max_attempts=1: reaped straight to the dead letters
    assert reaped_after <= LEASE + REAP_EVERY + 0.3, reaped_after
    error = sql.execute("SELECT last_error FROM jobs").fetchone()[0]
    assert error.startswith("lease expired while held by pgq-w-")


def test_the_monitor_shows_when_each_lease_was_last_renewed(queue: JobQueue) -> None:
    from monitor_support import pgq_monitor

    queue.enqueue("long", [{}, {}])
    renewed, idle = queue.claim("long", limit=2, lease=60)
    time.sleep(1.0)
    before_renew = time.monotonic()
    assert queue.renew([renewed], 60) == {renewed.id}
    with pgq_monitor(queue.conninfo) as monitor:
        ages = {lease.id: lease.heartbeat_age for lease in monitor.collect().leases.rows}
    # dated by the renew, not by the claim a second earlier (however long the collect took)
    since_renew = time.monotonic() - before_renew
    assert ages[renewed.id] < since_renew + 0.05, (ages, since_renew)
    assert ages[idle.id] is None, ages  # idle: claimed, never renewed


def test_the_heartbeat_stays_out_of_the_way_while_the_worker_finishes_jobs(queue: JobQueue) -> None:
    # A renew and a completion locking the same rows in different orders could deadlock: the worker
    # finishes jobs inside finishing(), which holds the heartbeat's statement off.
    queue.enqueue("long", [{}, {}, {}])
    jobs = queue.claim("long", limit=3, lease=60)
    beat = Heartbeat(queue.conninfo, "jobs", "public", queue.worker_id, 60)
    try:
        beat.hold(jobs)
        with beat.finishing(jobs[:2]):
            renewing = threading.Thread(target=beat.beat)
            renewing.start()
            renewing.join(0.3)
            assert renewing.is_alive(), "the heartbeat ran while the worker was finishing"
            assert queue.complete(jobs[:2]) == 2
        renewing.join(5)
        assert not renewing.is_alive()
        assert beat.renewals == 1 and beat.lost == set(), "a finished job was renewed or called lost"
    finally:
        beat.stop()
