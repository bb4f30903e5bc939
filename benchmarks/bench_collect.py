"""collect() cost against table size: it must follow the active jobs, not the table.

    python benchmarks/bench_collect.py [--dsn DSN] [--sizes 10000,1000000,5000000] [--runs 15]

Builds one jobs table per size (each in its own schema, `bench_<size>`): 70% done, 20% pending
(a tenth of them scheduled in the future, three priorities), 5% running (a fifth of the leases
expired), 5% failed, over 10 queues, with one INSERT ... SELECT generate_series, then VACUUM ANALYZE.
Then times Monitor.collect() (median of --runs after two warm-ups) on each and, in the same run, a
raw-SQL reference: `SELECT queue, status, count(*) ... GROUP BY 1, 2`, the full scan a naive dashboard
would run. Prints the largest/smallest ratio of collect() (must stay under 2).
Without --dsn it starts a private embedded PostgreSQL with stock durability settings.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import psycopg
from common import measured_server
from psycopg import sql

from pgq_tui.monitor.collect import Monitor
from pgq_tui.queue import schema as queue_schema

FILL = """
INSERT INTO {jobs} (queue, priority, status, run_at, attempts, locked_until, locked_by,
                    finished_at, last_error)
SELECT 'q' || mod(abs(hashint4(g::int)), 10),
       mod(g / 1000, 3),
       s.status,
       CASE WHEN s.status = 'pending' AND mod(g, 100) >= 88 THEN now() + interval '1 hour'
            ELSE now() - make_interval(secs => mod(g, 3600)) END,
       CASE WHEN s.status = 'pending' THEN 0 ELSE 1 END,
       CASE WHEN s.status = 'running' THEN now() + make_interval(secs => CASE WHEN mod(g, 100) = 94
                                                 THEN -1 - mod(g, 600) ELSE 60 + mod(g, 3600) END) END,
       CASE WHEN s.status = 'running' THEN 'bench-worker-' || (mod(g, 7)) END,
       CASE WHEN s.status IN ('done', 'failed') THEN now() - make_interval(secs => (%(n)s - g) / 1000.0) END,
       CASE WHEN s.status = 'failed' THEN 'boom' END
FROM generate_series(1, %(n)s) g,
     LATERAL (SELECT CASE WHEN mod(g, 100) < 70 THEN 'done' WHEN mod(g, 100) < 90 THEN 'pending'
                          WHEN mod(g, 100) < 95 THEN 'running' ELSE 'failed' END AS status) s
"""

REFERENCE = "SELECT queue, status, count(*) FROM {jobs} GROUP BY queue, status"


def build(dsn: str, schema: str, n: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
        queue_schema.install(conn, "jobs", schema)
        jobs = sql.Identifier(schema, "jobs")
        conn.execute(sql.SQL(FILL).format(jobs=jobs), {"n": n})
        conn.execute(sql.SQL("VACUUM ANALYZE {}").format(jobs))


def median_ms(fn, runs: int) -> float:
    for _ in range(2):
        fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def measure(dsn: str, schema: str, runs: int) -> tuple[float, float, str]:
    with Monitor(dsn, "jobs", schema) as monitor, psycopg.connect(dsn, autocommit=True) as conn:
        snap = monitor.collect()
        if snap.errors:
            raise SystemExit(f"collect() reported errors: {snap.errors}")
        collect_ms = median_ms(monitor.collect, max(runs, 3))
        reference = sql.SQL(REFERENCE).format(jobs=sql.Identifier(schema, "jobs"))
        ref_ms = median_ms(lambda: conn.execute(reference).fetchall(), max(3, runs // 5))
        q0 = snap.queues[0]
        sample = (
            f"{q0.queue}: ready {q0.ready} scheduled {q0.scheduled} running {q0.running} "
            f"expired {q0.expired} failed {q0.failed} done {q0.done}"
            f"{' (approximate)' if q0.approximate else ''}"
        )
    return collect_ms, ref_ms, sample


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", help="server to use (default: a private embedded PostgreSQL)")
    parser.add_argument("--sizes", default="10000,1000000,5000000")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--keep", action="store_true", help="keep the bench_* schemas")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    with measured_server(args.dsn) as (dsn, version):
        print(
            f"PostgreSQL {version}; collect() median of {args.runs} runs; "
            f"reference: {REFERENCE.format(jobs='jobs')}"
        )
        results: dict[int, tuple[float, float]] = {}
        for n in sizes:
            schema = f"bench_{n}"
            started = time.perf_counter()
            build(dsn, schema, n)
            built_s = time.perf_counter() - started
            collect_ms, ref_ms, sample = measure(dsn, schema, args.runs)
            results[n] = (collect_ms, ref_ms)
            print(
                f"{n:>10,} rows  collect() {collect_ms:7.2f} ms   full-scan reference {ref_ms:9.2f} ms   "
                f"(built in {built_s:.0f} s; {sample})",
                flush=True,
            )
        small, large = min(sizes), max(sizes)
        ratio = results[large][0] / results[small][0]
        ref_ratio = results[large][1] / results[small][1]
        print(
            f"collect() {large:,}/{small:,} ratio: {ratio:.2f} (must stay under 2); "
            f"full-scan reference ratio: {ref_ratio:.0f}"
        )
        if not args.keep:
            with psycopg.connect(dsn, autocommit=True) as conn:
                for n in sizes:
                    conn.execute(
                        sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(f"bench_{n}"))
                    )
        return 0 if ratio < 2 else 1


if __name__ == "__main__":
    sys.exit(main())
