"""Worker crashes: kill -9 a worker about every second while the pool's supervisor replaces it;
nothing is lost, every job is completed exactly once as far as the queue is concerned, and duplicate
runs are counted."""

from __future__ import annotations

import os
import random
import time

import psycopg

from pgq_tui.queue import JobQueue
from pgq_tui.queue.pool import WorkerPool
from pgq_tui.queue.worker import WorkerConfig

N_JOBS = 20_000
CHAOS_SECONDS = 30


def test_kill_9_workers_for_30_seconds_loses_nothing(
    crash_env: str, queue: JobQueue, sql: psycopg.Connection
) -> None:
    rng = random.Random(7)
    queue.enqueue("crash", [{"n": i, "ms": 5} for i in range(N_JOBS)], max_attempts=100)
    config = WorkerConfig(
        conninfo=crash_env,
        queues=("crash",),
        handler="crash_handler:record",
        batch=10,
        lease=2.0,
        keep=True,
        idle_sleep=0.05,
    )
    pool = WorkerPool(config, concurrency=4, reap_interval=0.5).start()
    kills = 0

    def lease_holder() -> str | None:
        """A running worker that holds a lease now (a killed one's lease outlives it for a while)."""
        alive = {s.worker_id for s in pool.workers if not s.killed}
        held = sql.execute("SELECT DISTINCT locked_by FROM jobs WHERE status = 'running'").fetchall()
        return next((w for (w,) in held if w in alive), None)

    try:
        # Every kill hits a worker mid-lease: on a busy machine a replacement takes seconds to start
        # and claim, so each kill waits for a lease to be held; the chaos lasts 30 s and 21 kills.
        chaos_until, give_up = time.monotonic() + CHAOS_SECONDS, time.monotonic() + 6 * CHAOS_SECONDS
        while time.monotonic() < chaos_until or kills < CHAOS_SECONDS * 0.7:
            time.sleep(rng.uniform(0.7, 1.3))
            while (victim := lease_holder()) is None:
                assert time.monotonic() < give_up, f"no worker held a lease to kill ({kills} kills)"
                time.sleep(0.05)
            if pool.kill_worker(victim) is not None:
                kills += 1
        deadline = time.monotonic() + 120
        while sql.execute("SELECT count(*) FROM jobs WHERE status <> 'done'").fetchone()[0] > 0:
            assert time.monotonic() < deadline, "jobs left unfinished after the chaos"
            time.sleep(0.5)
        while pool.restarts < kills:  # the last victim's replacement starts within 0.1 s
            assert time.monotonic() < deadline, "a killed worker was not replaced"
            time.sleep(0.1)
    finally:
        pool.stop(timeout=10)
    done = sql.execute("SELECT count(*) FROM jobs WHERE status = 'done'").fetchone()[0]
    accepted = sql.execute("SELECT sum(completed) FROM jobs_stats").fetchone()[0]
    runs, distinct_runs = sql.execute("SELECT count(*), count(DISTINCT job_id) FROM handler_runs").fetchone()
    duplicates = runs - distinct_runs
    reaped = sql.execute("SELECT count(*) FROM jobs WHERE attempts > 1").fetchone()[0]
    print(
        f"\ncrash suite: {kills} kill -9s, {N_JOBS} jobs, {runs} handler runs, {duplicates} duplicate runs "
        f"({duplicates / N_JOBS:.2%}), {reaped} jobs needed more than one attempt, "
        f"{pool.reaped} leases reaped, accepted completions {accepted}"
    )
    assert kills >= CHAOS_SECONDS * 0.7
    assert pool.restarts == kills and pool.failure is None  # every victim replaced, never "a loop"
    assert done == N_JOBS, "a job was lost"
    assert distinct_runs == N_JOBS
    assert accepted == N_JOBS, "a stale worker's completion was accepted (or one was lost)"
    assert duplicates >= 0 and reaped > 0, "the chaos never interrupted a lease: nothing was tested"
    assert os.environ["PGQ_CRASH_DSN"] == crash_env
