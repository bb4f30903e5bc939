"""The worker pool supervises its processes: a worker that dies of an error it cannot ride out is logged
and replaced with backoff; a tight crash loop stops the pool with a clear message (and the CLI with a
non-zero exit); kill_worker() (the demo's chaos key) is replaced at once and never counts as a crash.
Against the real server: the errors are a revoked privilege and a read-only session."""

from __future__ import annotations

import contextlib
import doctest
import logging
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator

import psycopg
import pytest
from psycopg import sql as pgsql
from psycopg.conninfo import make_conninfo

from pgq_tui.queue import JobQueue, supervise
from pgq_tui.queue.pool import WorkerPool
from pgq_tui.queue.supervise import RestartPolicy
from pgq_tui.queue.worker import WorkerConfig

FAST = RestartPolicy(backoff=0.05, backoff_max=0.5, crash_limit=3, crash_window=30)


def wait_for(cond: Callable[[], object], what: str, timeout: float = 30.0) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def config(conninfo: str) -> WorkerConfig:
    return WorkerConfig(conninfo=conninfo, queues=("q",), idle_sleep=0.05)


def pending(conn: psycopg.Connection) -> int:
    return conn.execute("SELECT count(*) FROM jobs").fetchone()[0]


@pytest.fixture
def worker_role(sql: psycopg.Connection) -> Iterator[str]:
    """A role the workers run as (SET ROLE through the DSN's options), with a queue's privileges."""
    role = f"pgq_w_{uuid.uuid4().hex[:8]}"
    ident = pgsql.Identifier(role)
    sql.execute(pgsql.SQL("CREATE ROLE {} NOLOGIN").format(ident))
    sql.execute(pgsql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON jobs, jobs_stats TO {}").format(ident))
    sql.execute(pgsql.SQL("GRANT SELECT ON jobs_pauses TO {}").format(ident))  # the claim reads it
    yield role
    sql.execute(pgsql.SQL("DROP OWNED BY {}").format(ident))
    sql.execute(pgsql.SQL("DROP ROLE {}").format(ident))


def test_policy_doctests() -> None:
    result = doctest.testmod(supervise)
    assert result.attempted > 0 and result.failed == 0


def test_a_worker_that_dies_of_a_database_error_is_logged_and_replaced(
    dsn: str, sql: psycopg.Connection, queue: JobQueue, worker_role: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="pgq_tui.queue.pool")
    as_role = make_conninfo(dsn, options=f"-c role={worker_role}")
    ident = pgsql.Identifier(worker_role)
    queue.enqueue("q", [{}] * 3)
    with WorkerPool(config(as_role), concurrency=1, reap_interval=0, restart=FAST) as pool:
        wait_for(lambda: pending(sql) == 0, "the worker to run the first jobs")
        (first,) = pool.workers
        sql.execute(pgsql.SQL("REVOKE UPDATE ON jobs FROM {}").format(ident))  # mid-run
        queue.enqueue("q", [{}])  # its next claim is refused: permission denied
        wait_for(lambda: pool.exits, "the worker to die")
        sql.execute(pgsql.SQL("GRANT UPDATE ON jobs TO {}").format(ident))
        wait_for(lambda: pending(sql) == 0, "a replacement to run the job")
        (replacement,) = pool.workers
        assert replacement.process.pid != first.process.pid and pool.restarts >= 1
        assert pool.failure is None
    died = pool.exits[0]
    assert (died.worker_id, died.exitcode, died.on_purpose) == (first.worker_id, 1, False)
    assert died.reason == "died of InsufficientPrivilege: permission denied for table jobs"
    assert f"worker {first.worker_id} (pid {first.process.pid}) died of InsufficientPrivilege" in caplog.text
    assert "restarting it in 0.1 s (crash 1 of 3 allowed within 30 s)" in caplog.text


def test_a_tight_crash_loop_stops_the_pool_with_a_clear_message(dsn: str, queue: JobQueue) -> None:
    # The DSN lands on a read-only session, as after a failover to a standby: every claim fails.
    read_only = make_conninfo(dsn, options="-c default_transaction_read_only=on")
    queue.enqueue("q", [{}])
    pool = WorkerPool(config(read_only), concurrency=2, reap_interval=0, restart=FAST).start()
    try:
        failure = pool.wait_failure(timeout=60)
        assert failure is not None, "the pool kept restarting workers that crash at once"
        wait_for(lambda: not pool.workers, "the pool to stop its workers")
    finally:
        pool.stop(timeout=5)
    assert failure.startswith("workers are crashing in a loop (3 crashes of one worker within 30 s)")
    assert "died of ReadOnlySqlTransaction: cannot execute" in failure
    assert pool.restarts >= 2 and len(pool.exits) >= 3


def test_worker_cli_exits_non_zero_when_workers_crash_in_a_loop(dsn: str, queue: JobQueue) -> None:
    queue.enqueue("q", [{}])
    read_only = make_conninfo(dsn, options="-c default_transaction_read_only=on")
    argv = ["worker", "--dsn", read_only, "--queue", "q", "--concurrency", "1", "--max-crashes", "2"]
    done = subprocess.run(
        [sys.executable, "-m", "pgq_tui", *argv], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("pgq-top worker: error: workers are crashing in a loop (2 crashes"), done.stderr
    assert "ReadOnlySqlTransaction" in last
    assert "restarting it in" in done.stderr and "Traceback" not in done.stderr


def test_killed_on_purpose_is_replaced_at_once_and_never_a_crash_loop(dsn: str) -> None:
    strict = RestartPolicy(backoff=5.0, crash_limit=1, crash_window=60)  # any real crash: give up
    with WorkerPool(config(dsn), concurrency=1, reap_interval=0, restart=strict) as pool:
        for n in range(1, 4):
            (victim,) = wait_for(lambda: [s for s in pool.workers if s.process.is_alive()], "a live worker")
            assert pool.kill_worker() == victim.process.pid
            wait_for(lambda n=n: pool.restarts == n and len(pool.workers) == 1, "the replacement")
        assert pool.failure is None
        assert [(e.on_purpose, e.reason) for e in pool.exits] == [(True, "was killed by SIGKILL")] * 3


def test_a_worker_stopped_from_outside_is_not_replaced(dsn: str, caplog: pytest.LogCaptureFixture) -> None:
    with WorkerPool(config(dsn), concurrency=2, reap_interval=0, restart=FAST) as pool:
        victim = wait_for(lambda: [s for s in pool.workers if s.process.is_alive()], "workers")[0]
        # Past start-up (its signal handlers are installed) once it has connected; a fixed sleep was
        # too short on a loaded machine, where importing psycopg alone takes a second.
        with psycopg.connect(dsn, autocommit=True) as conn:
            wait_for(
                lambda: conn.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE application_name = %s", (victim.worker_id,)
                ).fetchone(),
                "the worker to connect",
            )
        os.kill(victim.process.pid, signal.SIGTERM)  # e.g. an operator, or Ctrl-C to the group
        wait_for(lambda: len(pool.workers) == 1, "the worker to stop")
        time.sleep(0.3)
        assert (pool.restarts, len(pool.workers), pool.failure) == (0, 1, None)
    assert "stopped on a signal from outside the pool; not replaced (1 left)" in caplog.text


def test_a_replacement_that_cannot_start_counts_as_a_crash(dsn: str) -> None:
    def no_more_processes() -> contextlib.AbstractContextManager[None]:
        raise OSError(11, "Resource temporarily unavailable")

    pool = WorkerPool(config(dsn), concurrency=1, reap_interval=0, restart=FAST).start()
    try:
        (worker,) = wait_for(lambda: [s for s in pool.workers if s.process.is_alive()], "a worker")
        pool.around_spawn = no_more_processes
        os.kill(worker.process.pid, signal.SIGKILL)  # the OOM killer, say: a real crash
        failure = pool.wait_failure(timeout=30)
    finally:
        pool.stop(timeout=5)
    assert failure is not None and "3 crashes of one worker" in failure
    assert "a replacement worker could not start: BlockingIOError: [Errno 11] Resource temporarily" in failure
    assert pool.exits[0].reason == "was killed by SIGKILL"
