"""collect() cost against table size: it must follow the active jobs, not the table.

    python benchmarks/bench_collect.py [--dsn DSN] [--sizes 10000,1000000,5000000] [--runs 15]
                                       [--count-cap 1000]

Builds one jobs table per size (each in its own schema, `bench_<size>`): 70% done, 20% pending
(a tenth of them scheduled in the future, three priorities), 5% running (a fifth of the leases
expired), 5% failed, over 10 queues, with one INSERT ... SELECT generate_series, then VACUUM ANALYZE.
Then times Monitor.collect() (median of --runs after two warm-ups; every size built first, then
polled in turns, so the machine's load falls on each alike) on each and, in the same run, a
raw-SQL reference: `SELECT queue, status, count(*) ... GROUP BY 1, 2`, the full scan a naive dashboard
would run. Prints the largest/smallest ratio of collect() (must stay under 2). The background exact
count (counts above the cap) runs meanwhile on its own connection, as in the dashboard; its cost and
how far its figures run behind the poll are printed separately, per size.
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

from pgq_tui.detection import single_queue
from pgq_tui.jobtable import schema as queue_schema
from pgq_tui.monitor import health, open_monitor
from pgq_tui.monitor.collect import DEFAULT_COUNT_CAP

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
        # With synchronous_commit=off (a --dsn server tuned for speed) a VACUUM right after the load
        # cannot mark pages all-visible: the commit is not flushed yet. Wait for the WAL writer, so
        # index-only scans are index-only, as after autovacuum's visit to a real queue table.
        conn.execute("SELECT pg_sleep(0.5)")
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


class Size:
    """One size's monitor, opened and settled (its first background count landed), as a dashboard
    that has been running a while; its polls are timed in turns with the other sizes'."""

    def __init__(self, dsn: str, schema: str, cap: int) -> None:
        self.schema = schema
        model = single_queue(dsn, kind="pgq", table="jobs", schema=schema).model
        self.monitor = open_monitor(dsn, model, count_cap=cap)
        snap = self.monitor.collect()
        if snap.errors:
            raise SystemExit(f"collect() reported errors: {snap.errors}")
        started = time.perf_counter()
        self.landed = self.monitor.settle(120)
        self.first_s = time.perf_counter() - started
        self.lags: list[float] = []
        self.times: list[float] = []

    def poll(self) -> None:
        started = time.perf_counter()
        s = self.monitor.collect()
        self.times.append((time.perf_counter() - started) * 1000)
        if s.counts is not None and s.counts.lag_s is not None:
            self.lags.append(s.counts.lag_s)

    def report(self, conn: psycopg.Connection, runs: int) -> tuple[float, float, str, str]:
        snap = self.monitor.collect()
        reference = sql.SQL(REFERENCE).format(jobs=sql.Identifier(self.schema, "jobs"))
        ref_ms = median_ms(lambda: conn.execute(reference).fetchall(), max(3, runs // 5))
        q0 = snap.queues[0]
        sample = f"{q0.queue}: " + " ".join(
            f"{f} {health.fmt_figure(getattr(q0, f), q0.accuracy(f))}"
            for f in ("ready", "scheduled", "running", "stuck", "dead", "done")
        )
        c, lags = snap.counts, self.lags
        if c is None or c.background == "idle":
            background = "background count: idle (every count under the cap)"
        elif not self.landed or c.cost_ms is None:
            background = f"background count: none landed within 120 s ({c.error or c.background})"
        else:
            background = (
                f"background count: {c.cost_ms:.0f} ms per count (own connection), first landed "
                f"{self.first_s:.1f} s after the first poll; figures {statistics.median(lags):.1f} s behind "
                f"the poll (median), {max(lags):.1f} s at most over {len(lags)} polls; stated bound "
                f"{c.max_lag_s:.1f} s"
            )
        return statistics.median(self.times), ref_ms, sample, background


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", help="server to use (default: a private embedded PostgreSQL)")
    parser.add_argument("--sizes", default="10000,1000000,5000000")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--keep", action="store_true", help="keep the bench_* schemas")
    parser.add_argument("--count-cap", type=int, default=DEFAULT_COUNT_CAP)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    with measured_server(args.dsn) as (dsn, version):
        print(
            f"PostgreSQL {version}; count cap {args.count_cap}; collect() median of {args.runs} runs; "
            f"reference: {REFERENCE.format(jobs='jobs')}"
        )
        built: dict[int, float] = {}
        for n in sizes:  # every size first, then all timed in turns: load falls on each alike
            started = time.perf_counter()
            build(dsn, f"bench_{n}", n)
            built[n] = time.perf_counter() - started
        polled = {n: Size(dsn, f"bench_{n}", args.count_cap) for n in sizes}
        try:
            for _ in range(2):  # warm-ups
                for size in polled.values():
                    size.monitor.collect()
            for _ in range(max(args.runs, 3)):
                for size in polled.values():
                    size.poll()
            results: dict[int, tuple[float, float]] = {}
            with psycopg.connect(dsn, autocommit=True) as conn:
                for n, size in polled.items():
                    collect_ms, ref_ms, sample, background = size.report(conn, args.runs)
                    results[n] = (collect_ms, ref_ms)
                    print(
                        f"{n:>10,} rows  collect() {collect_ms:7.2f} ms   full-scan reference "
                        f"{ref_ms:9.2f} ms   (built in {built[n]:.0f} s; {sample})\n{'':>16}{background}",
                        flush=True,
                    )
        finally:
            for size in polled.values():
                size.monitor.close()
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
