"""Many claimers at once: every job claimed exactly once, and no claimer ever waits on another's rows."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import psycopg

from pgq_tui.queue import JobQueue
from pgq_tui.queue.pool import WorkerPool
from pgq_tui.queue.worker import WorkerConfig

N_JOBS = 10_000


def _drain(
    dsn: str, claimed: list[int], waits: list[str], errors: list[BaseException], complete: bool
) -> None:
    # The claiming session has lock_timeout=1ms, so any lock wait in a claim surfaces as an error we
    # can classify. Completion runs on a second session of the same worker.
    with JobQueue(dsn, lock_timeout_ms=1) as q, JobQueue(dsn, worker_id=q.worker_id) as finisher:
        try:
            while True:
                try:
                    jobs = q.claim("bulk", limit=10, lease=60)
                except psycopg.errors.LockNotAvailable as exc:
                    waits.append(f"{exc.diag.message_primary} ({exc.diag.context})")
                    continue
                if not jobs:
                    (left,) = q.conn.execute("SELECT count(*) FROM jobs WHERE status = 'pending'").fetchone()
                    if left == 0:
                        return
                    continue
                claimed.extend(j.id for j in jobs)
                if complete:
                    assert finisher.complete(jobs) == len(jobs)
        except BaseException as exc:
            errors.append(exc)


def _run_claimers(dsn: str, n_threads: int, complete: bool) -> tuple[list[list[int]], list[str]]:
    per_thread: list[list[int]] = [[] for _ in range(n_threads)]
    waits: list[str] = []
    errors: list[BaseException] = []
    threads = [
        threading.Thread(target=_drain, args=(dsn, bucket, waits, errors, complete)) for bucket in per_thread
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:3]
    return per_thread, waits


def _assert_exactly_once(per_thread: list[list[int]], ids: list[int]) -> None:
    claimed = [i for bucket in per_thread for i in bucket]
    dupes = [i for i, n in Counter(claimed).items() if n > 1]
    assert not dupes, f"claimed more than once: {dupes[:10]}"
    assert sorted(claimed) == ids
    assert sum(1 for bucket in per_thread if bucket) > 1, "one thread did all the work: no concurrency tested"


def _assert_waits_are_rare_chain_follows(waits: list[str], claims: int) -> None:
    # FOR UPDATE SKIP LOCKED skips a row whose lock it can't take. But when a claim meets a row that a
    # concurrent claim has just updated, PostgreSQL follows the update chain and locks the new version
    # with a plain wait (heap_lock_updated_tuple ignores SKIP LOCKED), then skips it: a brief wait on a
    # row it was never going to take, never on a pending row. Measured here, with lock_timeout=1ms
    # turning each wait longer than 1 ms into a counted error: every row-lock wait (its context names
    # the tuple) must be that kind, and all waits rare. A wait with no tuple context is not on a row:
    # the claim's UPDATE can wait to extend the table (new row versions on a full page) or behind
    # autovacuum truncating the table's empty tail; CI on a loaded machine saw 3 of those in 1,000 claims.
    row_waits = [w for w in waits if "tuple" in w]
    assert all("updated version" in w for w in row_waits), row_waits[:3]
    assert len(waits) <= max(3, claims // 50), f"{len(waits)} of {claims} claims waited"


def test_concurrent_claimers_never_wait_on_a_pending_row(queue: JobQueue) -> None:
    ids = queue.enqueue("bulk", [{"n": i} for i in range(N_JOBS)])
    per_thread, waits = _run_claimers(queue.conninfo, 6, complete=False)
    _assert_exactly_once(per_thread, ids)
    _assert_waits_are_rare_chain_follows(waits, N_JOBS // 10)


def test_threads_claiming_and_completing_drain_every_job_exactly_once(
    queue: JobQueue, sql: psycopg.Connection
) -> None:
    ids = queue.enqueue("bulk", [{"n": i} for i in range(N_JOBS)])
    per_thread, waits = _run_claimers(queue.conninfo, 6, complete=True)
    _assert_exactly_once(per_thread, ids)
    assert sql.execute("SELECT count(*) FROM jobs").fetchone()[0] == 0
    # Here the row a claim follows may also be one a worker is deleting (its completion).
    _assert_waits_are_rare_chain_follows(waits, N_JOBS // 10)


def test_worker_processes_drain_every_job_exactly_once(queue: JobQueue, sql: psycopg.Connection) -> None:
    queue.enqueue("bulk", [{"n": i} for i in range(N_JOBS)])
    config = WorkerConfig(conninfo=queue.conninfo, queues=("bulk",), keep=True, batch=10, idle_sleep=0.05)
    with WorkerPool(config, concurrency=4, reap_interval=0) as pool:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            # A worker counts a completion just after its statement commits: wait for both.
            if (
                sql.execute("SELECT count(*) FROM jobs WHERE status <> 'done'").fetchone()[0] == 0
                and pool.counts()["completed"] >= N_JOBS
            ):
                break
            time.sleep(0.2)
        counts = pool.counts()
        workers = {s.worker_id for s in pool.workers}
    # keep=True leaves every row behind: a job claimed twice would show attempts = 2.
    assert sql.execute("SELECT status, attempts, count(*) FROM jobs GROUP BY 1, 2").fetchall() == [
        ("done", 1, N_JOBS)
    ]
    assert counts["completed"] == N_JOBS and counts["refused"] == 0 and counts["failed"] == 0
    by_worker = dict(sql.execute("SELECT locked_by, count(*) FROM jobs GROUP BY 1").fetchall())
    assert set(by_worker) <= workers and len(by_worker) > 1


def test_pool_shutdown_releases_in_flight_jobs(queue: JobQueue, sql: psycopg.Connection) -> None:
    queue.enqueue("slow", [{"ms": 100}] * 200)
    config = WorkerConfig(
        conninfo=queue.conninfo, queues=("slow",), handler="pgq_tui.queue.handlers:sleep", batch=10, lease=60
    )
    pool = WorkerPool(config, concurrency=2, reap_interval=0).start()
    deadline = time.monotonic() + 30
    while sql.execute("SELECT count(*) FROM jobs WHERE status = 'running'").fetchone()[0] < 20:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    pool.stop(timeout=10)
    counts = pool.counts()
    assert counts["released"] > 0
    assert sql.execute("SELECT count(*) FROM jobs WHERE status = 'running'").fetchone()[0] == 0
    # Released jobs are pending again with their attempt given back; finished ones are gone.
    assert sql.execute("SELECT DISTINCT status, attempts FROM jobs").fetchall() == [("pending", 0)]
    (left,) = sql.execute("SELECT count(*) FROM jobs").fetchone()
    assert left == 200 - counts["completed"]


def test_worker_cli_runs_and_stops_cleanly_on_sigint(queue: JobQueue, sql: psycopg.Connection) -> None:
    queue.enqueue("cli", [{"ms": 1}] * 300)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pgq_tui",
            "worker",
            "--dsn",
            queue.conninfo,
            "--queue",
            "cli",
            "--concurrency",
            "2",
            "--reap-interval",
            "1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while sql.execute("SELECT count(*) FROM jobs").fetchone()[0] > 0:
            assert time.monotonic() < deadline, "workers did not drain the queue"
            time.sleep(0.2)
        apps = {
            r[0]
            for r in sql.execute(
                "SELECT application_name FROM pg_stat_activity WHERE application_name LIKE 'pgq-w-%%'"
                " AND application_name <> %s AND datname = current_database()",
                (queue.worker_id,),
            ).fetchall()
        }
        # Two workers; each has its claim session and its LISTEN session (and, once it has held a job
        # for lease/3, its heartbeat session), all under its worker id.
        assert len(apps) == 2
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "completed 300" in err
    assert "Traceback" not in err


def test_worker_cli_bad_input_is_one_line(dsn: str) -> None:
    env = {**os.environ, "PGCONNECT_TIMEOUT": "2"}
    cases = [
        (["--dsn", "host=/nonexistent-dir", "--queue", "q"], 3, "cannot connect"),
        (["--dsn", dsn, "--table", "missing", "--queue", "q"], 4, "does not exist"),
        (["--dsn", dsn, "--queue", "q", "--handler", "nope"], 2, "module:function"),
        (["--dsn", "bogus=1", "--queue", "q"], 2, "bad DSN"),
    ]
    for args, code, text in cases:
        proc = subprocess.run(
            [sys.executable, "-m", "pgq_tui", "worker", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=30,
        )
        assert proc.returncode == code, (args, proc.stderr)
        assert text in proc.stderr and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


ORPHAN_SCRIPT = """
import sys, time
from pgq_tui.queue.pool import WorkerPool
from pgq_tui.queue.worker import WorkerConfig
pool = WorkerPool(WorkerConfig(conninfo=sys.argv[1], queues=("q",), idle_sleep=0.1), concurrency=2).start()
print(" ".join(str(s.process.pid) for s in pool.workers), flush=True)
time.sleep(120)
"""


def test_workers_exit_when_their_pool_is_killed(dsn: str) -> None:
    parent = subprocess.Popen([sys.executable, "-c", ORPHAN_SCRIPT, dsn], stdout=subprocess.PIPE, text=True)
    pids = [int(p) for p in parent.stdout.readline().split()]
    assert len(pids) == 2
    parent.kill()
    parent.wait(10)
    deadline = time.monotonic() + 15
    for pid in pids:
        while _alive(pid):
            assert time.monotonic() < deadline, f"worker {pid} outlived its pool"
            time.sleep(0.1)


def _alive(pid: int) -> bool:
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


def test_idle_workers_stop_gracefully_on_sigint(dsn: str) -> None:
    # Regression: a signal handler that called multiprocessing.Event.set() while the worker slept in
    # that event's wait() deadlocked the worker (this test hung on the old code, leaving the workers
    # stuck in Event.set).
    config = WorkerConfig(conninfo=dsn, queues=("empty",), idle_sleep=0.2)
    for _ in range(3):
        pool = WorkerPool(config, concurrency=3, reap_interval=0).start()
        # Every worker has installed its signal handlers and is asleep in its idle wait once it
        # listens (a SIGINT that arrives while a spawned child is still importing is a plain Ctrl-C).
        with psycopg.connect(dsn, autocommit=True) as conn:
            deadline = time.monotonic() + 30
            while (
                conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND query LIKE 'LISTEN %%'"
                ).fetchone()[0]
                < 3
            ):
                assert time.monotonic() < deadline, "workers never started listening"
                time.sleep(0.05)
        time.sleep(0.3)
        procs = [s.process for s in pool.workers]
        for p in procs:  # what a Ctrl-C in the terminal does to the whole process group
            os.kill(p.pid, signal.SIGINT)
        for p in procs:
            p.join(5)
        exit_codes = [p.exitcode for p in procs]
        pool.stop(timeout=5)
        assert exit_codes == [0, 0, 0], "a worker did not stop on SIGINT"
