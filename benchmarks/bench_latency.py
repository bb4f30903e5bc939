"""Enqueue-to-start latency with idle workers, what idle workers cost, and the pool's drain rate,
each next to references measured on the same server in the same run.

    python benchmarks/bench_latency.py [--dsn DSN] [--jobs 200] [--every 0.1] [--idle-seconds 60]

Latency: one job every --every seconds (jittered +-50%) to idle workers; the handler records how long
ago the producer called enqueue (benchmarks/latency_handler.py). Three systems:
  - pgq-top, waking on NOTIFY (the default), 2 worker processes;
  - pgq-top polling every 0.2 s (WorkerConfig(listen=False, heartbeat=False): the worker before
    issue 13), 2 worker processes;
  - pgqueuer (asyncpg), its worker started with `pgqueuer.run()` (what `pgq run` calls), defaults.
Idle cost: 2 idle workers for --idle-seconds: claim and probe statements (pg_stat_statements) and
transactions (pg_stat_database) per worker per minute.
Drain: the pool (noop handler, batch 10, 2 workers) on a pre-filled table, new loop and old loop,
next to pgbench's claim + DELETE with 2 clients (bench_queue.py's reference).
Without --dsn it starts a private embedded PostgreSQL (stock durability) with pg_stat_statements.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import psycopg

# Spawned workers inherit sys.path: they find latency_handler.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_queue import pgbench, refill
from common import measured_server
from latency_handler import asyncpg_params

from pgq_tui.queue import JobQueue
from pgq_tui.queue.pool import WorkerPool
from pgq_tui.queue.worker import WorkerConfig

HERE = Path(__file__).resolve().parent
WORKERS = 2
# pg_stat_statements shows statements normalized (constants become $n): match on their shape.
CLAIM_LIKE = "%FOR UPDATE SKIP LOCKED%locked_by =%"
PROBE_LIKE = "%WITH RECURSIVE p AS%ORDER BY j.run_at LIMIT%"


def percentiles(ms: list[float]) -> str:
    q = statistics.quantiles(ms, n=100, method="inclusive")
    return f"p50 {q[49]:6.1f} ms  p90 {q[89]:6.1f} ms  p99 {q[98]:6.1f} ms  max {max(ms):6.1f} ms"


def wait_until(check: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.05)


def read_latencies(path: Path, n: int) -> list[float]:
    wait_until(lambda: path.exists() and len(path.read_text().split()) >= n, 120, f"{n} jobs to start")
    values = [float(v) for v in path.read_text().split()]
    path.unlink()
    return values


def pace(jobs: int, every: float, enqueue: Callable[[float], None]) -> None:
    rng = random.Random(13)
    for _ in range(jobs):
        time.sleep(every * rng.uniform(0.5, 1.5))
        enqueue(time.time())


def ours_latency(dsn: str, out: Path, jobs: int, every: float, **config: object) -> list[float]:
    cfg = WorkerConfig(dsn, ("latency",), handler="latency_handler:record", **config)  # type: ignore[arg-type]
    with WorkerPool(cfg, concurrency=WORKERS, reap_interval=0), JobQueue(dsn) as producer:
        time.sleep(2.0)  # spawned, connected, idle
        pace(jobs, every, lambda t: producer.enqueue("latency", [{"t": t}]))
        return read_latencies(out, jobs)


def pgqueuer_latency(dsn: str, out: Path, jobs: int, every: float) -> list[float]:
    import asyncpg
    from pgqueuer import AsyncpgDriver, Queries

    async def connect() -> asyncpg.Connection:
        return await asyncpg.connect(**asyncpg_params(dsn))

    async def install() -> None:
        conn = await connect()
        try:
            await Queries(AsyncpgDriver(conn)).install()
        finally:
            await conn.close()

    asyncio.run(install())
    worker = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import asyncio, pgqueuer; asyncio.run(pgqueuer.run('latency_handler:pgqueuer_app'))",
        ],
        env={**os.environ, "PYTHONPATH": str(HERE), "PGQ_LATENCY_DSN": dsn, "PGQ_LATENCY_FILE": str(out)},
    )
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            # Its one asyncpg connection both LISTENs and dequeues, so wait for the session itself.
            wait_until(
                lambda: (
                    conn.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                        " AND pid <> pg_backend_pid()"
                    ).fetchone()[0]  # type: ignore[index]
                    > 0
                ),
                60,
                "pgqueuer's worker to connect",
            )
        time.sleep(3.0)  # listening and idle

        async def produce() -> None:
            conn = await connect()
            queries = Queries(AsyncpgDriver(conn))
            rng = random.Random(13)
            try:
                for _ in range(jobs):
                    await asyncio.sleep(every * rng.uniform(0.5, 1.5))
                    await queries.enqueue("latency", str(time.time()).encode())
            finally:
                await conn.close()

        asyncio.run(produce())
        return read_latencies(out, jobs)
    finally:
        worker.send_signal(signal.SIGINT)
        try:
            worker.wait(30)
        except subprocess.TimeoutExpired:
            worker.kill()


def idle_cost(
    dsn: str, seconds: float, stmts: bool, workers: int = WORKERS, **config: object
) -> tuple[float, float, float]:
    """(claims, probes, transactions) per idle worker per minute; with workers=0, the database's
    own transactions per minute (autovacuum visits it every naptime), to subtract."""
    cfg = WorkerConfig(dsn, ("idle",), **config)  # type: ignore[arg-type]
    # the pool as `pgq-top worker` runs it: its reaper included (reap_interval's default), none at all
    # for the baseline
    pool = WorkerPool(cfg, concurrency=workers) if workers else contextlib.nullcontext()
    with psycopg.connect(dsn, autocommit=True) as conn, pool:

        def counters() -> tuple[int, int, int]:
            conn.execute("SELECT pg_stat_clear_snapshot()")
            xacts = conn.execute(
                "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"
            ).fetchone()[0]  # type: ignore[index]
            if not stmts:
                return 0, 0, xacts
            calls = conn.execute(
                "SELECT coalesce(sum(calls) FILTER (WHERE query LIKE %s), 0)::int,"
                " coalesce(sum(calls) FILTER (WHERE query LIKE %s), 0)::int FROM pg_stat_statements"
                " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())",
                (CLAIM_LIKE, PROBE_LIKE),
            ).fetchone()
            return calls[0], calls[1], xacts  # type: ignore[index]

        time.sleep(12.0)  # started, listening, and past the 10 s stats flush of an idle backend
        before = counters()
        time.sleep(seconds)
        after = counters()
    per_minute = 60.0 / seconds / max(workers, 1)
    own = 2 + (1 if stmts else 0)  # this connection's reads between the two snapshots
    return (
        (after[0] - before[0]) * per_minute,
        (after[1] - before[1]) * per_minute,
        (after[2] - before[2] - own) * per_minute,
    )


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time the processes have used (Linux /proc), robust to a busy machine."""
    ticks = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def pool_drain(dsn: str, rows: int, seconds: float, **config: object) -> tuple[float, float]:
    """(jobs/s, worker CPU ms per 1,000 jobs) of the pool draining a pre-filled table."""
    refill(dsn, rows)
    cfg = WorkerConfig(dsn, ("bench",), batch=10, **config)  # type: ignore[arg-type]
    with WorkerPool(cfg, concurrency=WORKERS, reap_interval=0) as pool:
        wait_until(lambda: pool.counts()["completed"] >= 2000, 60, "the pool to start draining")
        time.sleep(0.5)
        pids = [s.process.pid for s in pool.workers if s.process.pid]
        start, cpu0, t0 = pool.counts()["completed"], cpu_seconds(pids), time.perf_counter()
        time.sleep(seconds)
        done, cpu1, t1 = pool.counts()["completed"] - start, cpu_seconds(pids), time.perf_counter()
        return done / (t1 - t0), (cpu1 - cpu0) * 1e6 / max(done, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dsn")
    ap.add_argument("--jobs", type=int, default=200, help="jobs per latency run")
    ap.add_argument("--every", type=float, default=0.1, help="mean seconds between jobs")
    ap.add_argument("--idle-seconds", type=float, default=60)
    ap.add_argument("--drain-seconds", type=float, default=5)
    ap.add_argument("--rows", type=int, default=200_000, help="jobs pre-filled before each drain")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved drain runs per system")
    ap.add_argument("--skip-pgqueuer", action="store_true")
    args = ap.parse_args()
    with measured_server(args.dsn, {"shared_preload_libraries": "pg_stat_statements"}) as (dsn, version):
        with JobQueue(dsn) as q:
            q.install()
        with psycopg.connect(dsn, autocommit=True) as conn:
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                conn.execute("SELECT pg_stat_statements_reset()")
                stmts = True
            except psycopg.Error:
                stmts = False
        print(
            f"PostgreSQL {version}, {os.cpu_count()} cores; {args.jobs} jobs, "
            f"one every ~{args.every * 1000:.0f} ms, to {WORKERS} idle worker processes;"
            f" load average {os.getloadavg()[0]:.1f} (the machine is shared: compare within a run)\n",
            flush=True,
        )
        out = Path(tempfile.mkdtemp(prefix="pgq-latency-")) / "latency.txt"
        os.environ["PGQ_LATENCY_FILE"] = str(out)
        print("enqueue -> handler start")
        notify = ours_latency(dsn, out, args.jobs, args.every)
        print(f"  pgq-top, wake on NOTIFY:  {percentiles(notify)}", flush=True)
        poll = ours_latency(dsn, out, args.jobs, args.every, listen=False, heartbeat=False)
        print(f"  pgq-top, poll every 0.2 s: {percentiles(poll)}", flush=True)
        if not args.skip_pgqueuer:
            theirs = pgqueuer_latency(dsn, out, args.jobs, args.every)
            print(f"  pgqueuer (asyncpg):       {percentiles(theirs)}", flush=True)
        print(f"\nidle workers, per worker per minute ({args.idle_seconds:.0f} s window)")
        source = "pg_stat_statements" if stmts else "no pg_stat_statements: transactions only"
        _, _, baseline = idle_cost(dsn, args.idle_seconds, stmts, workers=0)
        baseline /= WORKERS  # the database's own, per minute, shared out per worker below
        for label, config in (
            ("wake on NOTIFY", {}),
            ("poll every 0.2 s", {"listen": False, "heartbeat": False}),
        ):
            window = args.idle_seconds if not config else min(args.idle_seconds, 10)
            claims, probes, xacts = idle_cost(dsn, window, stmts, **config)
            print(
                f"  {label + ':':17} {claims:5.1f} claims, {probes:5.1f} probes,"
                f" {xacts - baseline:5.1f} transactions ({source}; the database's own"
                f" {baseline * WORKERS:.0f}/min without workers subtracted)",
                flush=True,
            )
        print(
            f"\npool drain, noop handler, batch 10, {WORKERS} workers, {args.drain_seconds:.0f} s"
            f" on {args.rows:,} rows"
        )
        runs: dict[str, list[tuple[float, float]]] = {"new": [], "old": [], "pgbench": []}
        old_loop = {"listen": False, "heartbeat": False}
        for name in ("pgbench", "new", "old") * args.repeat:  # interleaved: the machine is shared
            if name == "pgbench":
                refill(dsn, args.rows)
                runs[name].append((pgbench(dsn, WORKERS, 10, args.drain_seconds), 0.0))
            else:
                runs[name].append(
                    pool_drain(dsn, args.rows, args.drain_seconds, **({} if name == "new" else old_loop))
                )
        ref = statistics.median(r for r, _ in runs["pgbench"])
        for name, label in (("new", "NOTIFY + heartbeats"), ("old", "polling, no heartbeats")):
            rate = statistics.median(r for r, _ in runs[name])
            cpu = statistics.median(c for _, c in runs[name])
            print(
                f"  pool, {label:24} {rate:9,.0f} jobs/s, ratio {rate / ref:.2f};"
                f" worker CPU {cpu:5.1f} ms per 1,000 jobs"
            )
        print(
            f"  pgbench claim + DELETE, {WORKERS} clients: {ref:,.0f} jobs/s (medians of {args.repeat} runs)"
        )
        print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
        out.parent.rmdir()


if __name__ == "__main__":
    sys.exit(main())
