"""The demo pool's throughput, next to pgbench measured in the same run.

    python benchmarks/bench_demo.py [--seconds 5] [--rows 300000] [--repeat 3]

- "demo defaults": the pool `pgq-top --demo` starts (3 workers, batch 10, the demo handler with its
  2-8 ms of work per job and 10% failures, four queues) draining a backlog: the demo's capacity.
- "max": the same DemoController with the noop handler on one queue, 2 and 4 workers, batch 10 and
  100, against pgbench running the seed's claim CTE then DELETE (`-M prepared`) with as many clients.
Counts come from the pool's own counters over a window that starts after every worker has begun.
Without --dsn it starts a private embedded PostgreSQL with stock durability settings.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The same pgbench reference (script, refill) as the queue benchmark.
from bench_queue import pgbench, refill
from common import measured_server

from pgq_tui.demo import DemoController
from pgq_tui.demo.load import QUEUES
from pgq_tui.queue import JobQueue


def fill_demo_queues(dsn: str, n: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("TRUNCATE jobs, jobs_stats")
        conn.execute(
            "INSERT INTO jobs (queue, payload, max_attempts) "
            "SELECT (%s::text[])[1 + g %% 4], jsonb_build_object('n', g), 3 FROM generate_series(1, %s) g",
            (list(QUEUES), n),
        )
        conn.execute("VACUUM ANALYZE jobs")


def drain(ctl: DemoController, seconds: float) -> float:
    """Jobs/s the controller's pool handles over `seconds`, once all its workers are busy."""
    ctl.start()
    try:
        deadline = time.monotonic() + 60
        while ctl.status().counts["handled"] < 200 * ctl.initial_workers and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)  # spawned workers start one by one: let the last one settle in
        start, t0 = ctl.status().counts["handled"], time.perf_counter()
        time.sleep(seconds)
        end, t1 = ctl.status().counts["handled"], time.perf_counter()
        return (end - start) / (t1 - t0)
    finally:
        ctl.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dsn")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--rows", type=int, default=300_000, help="jobs pre-filled before each drain")
    ap.add_argument("--workers", default="2,4")
    ap.add_argument("--batches", default="10,100")
    ap.add_argument("--repeat", type=int, default=1, help="runs per cell, alternating; the median is shown")
    args = ap.parse_args()
    with measured_server(args.dsn) as (dsn, version):
        with JobQueue(dsn) as q:
            q.install()
        print(f"PostgreSQL {version}, {os.cpu_count()} cores, {args.seconds:.0f} s per run\n")

        fill_demo_queues(dsn, 50_000)
        default = drain(DemoController(dsn, rate=0, reap_interval=0), args.seconds)
        print(f"demo defaults (3 workers, batch 10, handler 2-8 ms/job, 10% failures): {default:,.0f} jobs/s")
        print("  (the default load is 50 jobs/s, so the demo pool idles most of the time)\n")

        print(
            f"{'batch':>5} {'workers':>7} {'pgbench jobs/s':>15} {'demo pool (noop) jobs/s':>24} {'ratio':>6}"
        )
        for batch in [int(b) for b in args.batches.split(",")]:
            for workers in [int(w) for w in args.workers.split(",")]:
                refs, mine = [], []
                for _ in range(args.repeat):  # alternate, so drift on shared cores hits both sides
                    refill(dsn, args.rows)
                    refs.append(pgbench(dsn, workers, batch, args.seconds))
                    refill(dsn, args.rows)
                    ctl = DemoController(
                        dsn,
                        workers=workers,
                        batch=batch,
                        rate=0,
                        reap_interval=0,
                        queues=("bench",),
                        handler="pgq_tui.queue.handlers:noop",
                    )
                    mine.append(drain(ctl, args.seconds))
                ref, ours = statistics.median(refs), statistics.median(mine)
                print(f"{batch:>5} {workers:>7} {ref:>15,.0f} {ours:>24,.0f} {ours / ref:>6.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
