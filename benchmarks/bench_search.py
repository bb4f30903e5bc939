"""Search time vs table size, bounded and unbounded, with and without a GIN index (issue #32).

    python benchmarks/bench_search.py [--dsn DSN] [--sizes 100000,1000000]

For each size, pgq-top's own table is filled (COPY via JobQueue.enqueue; 2% dead with error A,
0.3% dead with error B), then three searches are timed through `pgq_tui.search.run.search` (its
own connection, statement_timeout 30 s): an error substring with state:dead over the default
bound (newest 100,000), the same unbounded, and a JSON path (`args.customer.id:42`) unbounded
without and with a GIN index on payload. Without --dsn it starts a private embedded PostgreSQL.
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime, timezone

import psycopg
from common import measured_server

from pgq_tui.detection import single_queue
from pgq_tui.queue import JobQueue
from pgq_tui.search.query import parse
from pgq_tui.search.run import search


def fill(dsn: str, rows: int) -> None:
    with JobQueue(dsn) as q, psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS jobs, jobs_stats")
        q.install()
        for start in range(0, rows, 200_000):
            n = min(200_000, rows - start)
            q.enqueue("payments", [{"customer": {"id": (start + i) % 1000}} for i in range(n)])
        conn.execute(
            "UPDATE jobs SET status = 'failed', finished_at = now(), last_error = CASE WHEN id % 50 = 0"
            " THEN 'ConnectionError: connection refused' ELSE 'CardError: invalid card' END"
            " WHERE id % 50 = 0 OR id % 333 = 0"
        )
        conn.execute("VACUUM ANALYZE jobs")


def timed(dsn: str, where: str, limit_scan: int | None) -> tuple[float, str]:
    model = single_queue(dsn, kind="pgq").model
    started = time.perf_counter()
    result = search(dsn, model, parse(where, datetime.now(timezone.utc)), limit_scan=limit_scan)
    return time.perf_counter() - started, result.summary()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn")
    ap.add_argument("--sizes", default="100000,1000000")
    args = ap.parse_args()
    with measured_server(args.dsn) as (dsn, version):
        print(f"PostgreSQL {version}")
        for size in (int(s) for s in args.sizes.split(",")):
            fill(dsn, size)
            runs = [
                ('error:~"connection refused" state:dead', 100_000, ""),
                ('error:~"connection refused" state:dead', None, ""),
                ("args.customer.id:42", None, "no GIN"),
            ]
            for where, bound, note in runs:
                took, summary = timed(dsn, where, bound)
                shown = f"{bound or 'none':>7}"
                print(f"{size:>9,} rows  bound {shown}  {took * 1000:8.1f} ms  {where} {note}: {summary}")
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute("CREATE INDEX jobs_payload_gin ON jobs USING gin (payload jsonb_path_ops)")
                conn.execute("ANALYZE jobs")
            took, summary = timed(dsn, "args.customer.id:42", None)
            print(
                f"{size:>9,} rows  bound    none  {took * 1000:8.1f} ms  args.customer.id:42 GIN: {summary}"
            )


if __name__ == "__main__":
    main()
