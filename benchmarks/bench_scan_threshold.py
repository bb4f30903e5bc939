"""What an unindexed count costs per page: the measurement behind `SCAN_PAGES` (monitor/tiers.py).

    python benchmarks/bench_scan_threshold.py [--dsn DSN] [--rows 20000,50000,100000,200000] [--runs 15]

A table shaped like the seed article's `jobs` (queue, payload, status, run_at, attempts, locked_until),
with only its `jobs_ready` index, filled to each size, VACUUM ANALYZE'd and warm in shared buffers.
Timed: the scan-form count a dialect supplies when no index serves a state (one GROUP BY over the
rows of that status, a sequential scan), on a session tuned as the monitor's, median of --runs.
Prints pages, ms, and microseconds per page, and the page count a 3 ms scan reaches at the slowest
measured rate. The load average is printed before and after (2 shared cores: absolute times vary).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import psycopg
from common import measured_server

DDL = """
CREATE TABLE jobs (
    id bigserial PRIMARY KEY, queue text NOT NULL DEFAULT 'default', payload jsonb NOT NULL,
    status text NOT NULL DEFAULT 'pending', run_at timestamptz NOT NULL DEFAULT now(),
    attempts int NOT NULL DEFAULT 0, locked_until timestamptz);
CREATE INDEX jobs_ready ON jobs (queue, run_at) WHERE status = 'pending';
"""
SCAN = """
SELECT queue, count(*) FILTER (WHERE locked_until >= now() OR locked_until IS NULL) AS running,
       count(*) FILTER (WHERE locked_until < now()) AS stuck
FROM jobs WHERE status IN ('running') GROUP BY queue"""
BUDGET_MS = 3.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn")
    ap.add_argument("--rows", default="20000,50000,100000,200000")
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    print(f"load before: {os.getloadavg()}")
    rates = []
    with measured_server(args.dsn) as (dsn, version), psycopg.connect(dsn, autocommit=True) as conn:
        print(f"PostgreSQL {version}")
        for n in (int(x) for x in args.rows.split(",")):
            conn.execute("DROP TABLE IF EXISTS jobs")
            conn.execute(DDL)
            conn.execute(
                "INSERT INTO jobs (queue, payload, status, locked_until) SELECT 'q' || (i %% 10),"
                " jsonb_build_object('n', i), CASE WHEN i %% 100 = 0 THEN 'running' ELSE 'pending' END,"
                " CASE WHEN i %% 100 = 0 THEN now() - (i %% 3) * interval '1 hour' END"
                " FROM generate_series(1, %s) i",
                (n,),
            )
            conn.execute("VACUUM ANALYZE jobs")
            pages = conn.execute(
                "SELECT pg_relation_size('jobs') / current_setting('block_size')::int"
            ).fetchone()[0]  # type: ignore[index]
            conn.execute(
                "SET enable_bitmapscan = off; SET jit = off; SET plan_cache_mode = force_generic_plan"
            )
            for _ in range(3):
                conn.execute(SCAN).fetchall()
            times = []
            for _ in range(args.runs):
                t = time.perf_counter()
                conn.execute(SCAN, prepare=True).fetchall()
                times.append((time.perf_counter() - t) * 1000)
            ms = statistics.median(times)
            rates.append(ms * 1000 / pages)
            print(f"{n:>9} rows  {pages:>6} pages  {ms:7.2f} ms  {ms * 1000 / pages:6.2f} us/page")
    slowest = max(rates)
    print(
        f"slowest {slowest:.2f} us/page: a {BUDGET_MS:g} ms scan reaches"
        f" {BUDGET_MS * 1000 / slowest:.0f} pages"
    )
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
