"""Queue throughput against references measured in the same run.

    python benchmarks/bench_queue.py [--dsn DSN] [--seconds 5] [--clients 1,2,4] [--batches 1,10,100]

Drain: a pre-filled table is drained for --seconds by
  - pgbench running the seed's claim CTE then DELETE of the claimed ids (`-M prepared`), the ceiling;
  - N JobQueue processes doing complete_and_claim() in a loop, the worker's steady state (our
    statements: fencing and counters included; claim() + complete() on an older checkout).
Enqueue: rows/s for JobQueue.enqueue() in batches of 1,000 against COPY on one connection.
Ratios (ours / reference) are what to compare across machines; absolute numbers drift.
Without --dsn it starts a private embedded PostgreSQL with stock durability settings.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
from common import measured_server
from psycopg.conninfo import conninfo_to_dict

from pgq_tui.demo.embedded import bin_dir
from pgq_tui.queue import JobQueue

PGBENCH_SCRIPT = """
WITH c AS (
    SELECT id FROM jobs WHERE status = 'pending' AND queue = 'bench' AND run_at <= now()
    ORDER BY priority DESC, run_at, id LIMIT {batch} FOR UPDATE SKIP LOCKED
), u AS (
    UPDATE jobs j SET status = 'running', attempts = j.attempts + 1,
        locked_until = now() + interval '30 seconds', locked_by = 'pgbench'
    FROM c WHERE j.id = c.id RETURNING j.id
)
SELECT coalesce(array_agg(id), '{{}}') AS ids FROM u \\gset
DELETE FROM jobs WHERE id = ANY(:ids::bigint[]);
"""


def refill(dsn: str, n: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("TRUNCATE jobs, jobs_stats")
        conn.execute(
            "INSERT INTO jobs (queue, payload) SELECT 'bench', jsonb_build_object('n', g) "
            "FROM generate_series(1, %s) g",
            (n,),
        )
        conn.execute("VACUUM ANALYZE jobs")


def remaining(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        return conn.execute("SELECT count(*) FROM jobs").fetchone()[0]


def pgbench(dsn: str, clients: int, batch: int, seconds: float) -> float:
    """Jobs/s drained by pgbench (transactions/s x batch, checked against the rows really gone)."""
    params = conninfo_to_dict(dsn)
    before = remaining(dsn)
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as fh:
        fh.write(PGBENCH_SCRIPT.format(batch=batch))
    os.chmod(fh.name, 0o644)
    env = {
        **os.environ,
        "PGHOST": str(params.get("host", "")),
        "PGPORT": str(params.get("port", "5432")),
        "PGUSER": str(params.get("user", "postgres")),
        "PGDATABASE": str(params.get("dbname", "postgres")),
    }
    started = time.perf_counter()
    proc = subprocess.run(
        [
            str(bin_dir() / "pgbench"),
            "-n",
            "-M",
            "prepared",
            "-c",
            str(clients),
            "-j",
            str(clients),
            "-T",
            str(int(seconds)),
            "-f",
            fh.name,
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"pgbench failed: {proc.stderr.strip()[-400:]}")
    elapsed = time.perf_counter() - started
    Path(fh.name).unlink()
    return (before - remaining(dsn)) / elapsed


def _drain_proc(dsn: str, batch: int, seconds: float, out: mp.Queue) -> None:
    done = 0
    with JobQueue(dsn) as q:
        q.claim("warmup", limit=1)
        deadline = time.perf_counter() + seconds
        if not hasattr(q, "complete_and_claim"):  # an older checkout (bench_queue_ab.py --before)
            while time.perf_counter() < deadline:
                jobs = q.claim("bench", limit=batch)
                done += q.complete(jobs)
            out.put(done)
            return
        # The worker's steady state: the statement completing a batch claims the next one.
        jobs = q.claim("bench", limit=batch)
        while time.perf_counter() < deadline and jobs:
            accepted, jobs = q.complete_and_claim(jobs, "bench", limit=batch)
            done += accepted
        done += q.complete(jobs)
    out.put(done)


def jobqueue_drain(dsn: str, clients: int, batch: int, seconds: float) -> float:
    ctx = mp.get_context("spawn")
    out: mp.Queue = ctx.Queue()
    procs = [ctx.Process(target=_drain_proc, args=(dsn, batch, seconds, out)) for _ in range(clients)]
    for p in procs:
        p.start()
    total = sum(out.get(timeout=seconds + 60) for _ in procs)
    for p in procs:
        p.join()
    return total / seconds


def enqueue_rates(dsn: str, rows: int = 50_000) -> tuple[float, dict[int, float]]:
    """Rows/s for one raw COPY of `rows` (the reference) and for JobQueue.enqueue() in batches of
    1,000 (one transaction, so one commit, each) and of all `rows` at once."""
    payloads = [{"n": i, "kind": "bench"} for i in range(rows)]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("TRUNCATE jobs, jobs_stats")
        started = time.perf_counter()
        with conn.cursor() as cur, cur.copy("COPY jobs (queue, payload) FROM STDIN") as copy:
            for p in payloads:
                copy.write_row(("copy", psycopg.types.json.Jsonb(p)))
        copy_rate = rows / (time.perf_counter() - started)
    ours: dict[int, float] = {}
    with JobQueue(dsn) as q:
        for batch in (1000, rows):
            started = time.perf_counter()
            for i in range(0, rows, batch):
                q.enqueue("ours", payloads[i : i + batch])
            ours[batch] = rows / (time.perf_counter() - started)
    return copy_rate, ours


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dsn")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--clients", default="1,2,4")
    ap.add_argument("--batches", default="1,10,100")
    ap.add_argument("--rows", type=int, default=300_000, help="jobs pre-filled before each drain")
    args = ap.parse_args()
    with measured_server(args.dsn) as (dsn, version):
        with JobQueue(dsn) as q:
            q.install()
        print(
            f"PostgreSQL {version}, {os.cpu_count()} cores, {args.seconds:.0f} s per run, "
            f"{args.rows:,} jobs pre-filled\n"
        )
        copy_rate, ours = enqueue_rates(dsn)
        print(f"enqueue, 1 connection, reference: one raw COPY of 50,000 rows {copy_rate:,.0f} rows/s")
        for batch, rate in ours.items():
            ratio = rate / copy_rate
            print(f"  JobQueue.enqueue, {batch:>6,} per call: {rate:>9,.0f} rows/s, ratio {ratio:.2f}")
        print()
        print(f"{'batch':>5} {'clients':>7} {'pgbench jobs/s':>15} {'JobQueue jobs/s':>16} {'ratio':>6}")
        for batch in [int(b) for b in args.batches.split(",")]:
            for clients in [int(c) for c in args.clients.split(",")]:
                refill(dsn, args.rows)
                ref = pgbench(dsn, clients, batch, args.seconds)
                refill(dsn, args.rows)
                mine = jobqueue_drain(dsn, clients, batch, args.seconds)
                print(f"{batch:>5} {clients:>7} {ref:>15,.0f} {mine:>16,.0f} {mine / ref:>6.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
