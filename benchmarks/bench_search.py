"""Search time vs table size, bounded and unbounded, with and without a GIN index (issue #32).

    python benchmarks/bench_search.py [--dsn DSN] [--sizes 100000,1000000]
    python benchmarks/bench_search.py --stock procrastinate [--rows 2000000] [--timeout-ms 50]
    python benchmarks/bench_search.py --buried [--sizes 150000,2000000]

For each size, pgq-top's own table is filled (COPY via JobQueue.enqueue; 2% dead with error A,
0.3% dead with error B), then three searches are timed through `pgq_tui.search.run.search` (its
own connection, statement_timeout 30 s): an error substring with state:dead over the default
bound, as the newest 100,000 jobs alone and through pgq-top's dead-jobs index (every dead job, the
bound holding them all), the same unbounded, and a JSON path (`args.customer.id:42`) unbounded
without and with a GIN index on payload. Without --dsn it starts a private embedded PostgreSQL.

With --buried, the reviewer's shape of #32 (2,000 old dead jobs under each size of newer ones):
`state:dead error:~"invalid card"` as the newest 100,000 jobs alone, through pgq-top's dead-jobs
index (the default), and unbounded.

With --stock KIND, the acceptance of issue #32 on a framework's stock schema instead (installed by its
own tool, rows in a long-lived install's shape, no index added: bench_framework_poll.build): a search
no index serves (`args.customer.id:42`), bounded by default and unbounded, each on its own connection
under its statement_timeout; then an unbounded one under a timeout shorter than it needs. Each must
return (or fail with one line) within its timeout, say what it searched, and leave no session of
the search's in pg_stat_activity (so no transaction open). Exit 1 if one does not.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from datetime import datetime, timezone

import psycopg
from common import measured_server

from pgq_tui.detection import find_queues, single_queue
from pgq_tui.errors import PgqError
from pgq_tui.queue import JobQueue
from pgq_tui.search.query import parse
from pgq_tui.search.run import APPLICATION_NAME, search


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


def bury(dsn: str, rows: int) -> None:
    """The reviewer's shape (#32): 2,000 dead 'invalid card' jobs, the oldest, under `rows` newer
    ones (90% done, 10% pending), by SQL."""
    with JobQueue(dsn) as q, psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS jobs, jobs_stats")
        q.install()
        conn.execute(
            "INSERT INTO jobs (queue, payload, status, attempts, finished_at, last_error)"
            " SELECT 'payments', jsonb_build_object('n', n), 'failed', 5, now(), 'CardError: invalid card'"
            " FROM generate_series(1, 2000) n"
        )
        conn.execute(
            "INSERT INTO jobs (queue, payload, status, finished_at)"
            " SELECT 'payments', jsonb_build_object('n', n), CASE WHEN n %% 10 = 0 THEN 'pending' ELSE 'done'"
            " END, CASE WHEN n %% 10 = 0 THEN NULL ELSE now() END FROM generate_series(1, %s) n",
            (rows,),
        )
        conn.execute("VACUUM ANALYZE jobs")


def timed(dsn: str, where: str, limit_scan: int | None, indexed: bool = True) -> tuple[float, str]:
    """One search; `indexed` False: as if no index served its state (the newest-N scan alone)."""
    model = single_queue(dsn, kind="pgq").model
    if not indexed and model.search is not None:
        model = replace(model, search=replace(model.search, indexed_states=()))
    started = time.perf_counter()
    result = search(dsn, model, parse(where, datetime.now(timezone.utc)), limit_scan=limit_scan)
    return time.perf_counter() - started, result.summary()


def searches_left(dsn: str) -> list[tuple[str, str | None]]:
    """The search's sessions still on the server: (state, xact_start), none expected."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT state, xact_start::text FROM pg_stat_activity WHERE application_name = %s",
            (APPLICATION_NAME,),
        ).fetchall()
    return [(str(r[0]), r[1]) for r in rows]


def stock(server_dsn: str, kind: str, rows: int, short_ms: int) -> bool:
    """Issue #32's acceptance on `kind`'s stock schema with `rows` jobs; True when every check holds."""
    from bench_framework_poll import QUEUES, build  # the schema by the framework's own tool, its fill

    os.environ["PGQ_TEST_QUEUES"] = ",".join(QUEUES)  # pg-boss: one partition each, before the fill

    started = time.perf_counter()
    dsn = build(server_dsn, kind, rows, advised=False)
    print(f"{kind}: {rows:,} rows, stock schema, built in {time.perf_counter() - started:.0f} s")
    model = find_queues(dsn, kind=kind)[0].model
    where = "args.customer.id:42"  # no index of the framework's serves a JSON path on its args
    ok = True
    for bound, timeout_ms in ((100_000, 30_000), (None, 30_000), (None, short_ms)):
        started = time.perf_counter()
        try:
            said = search(
                dsn, model, parse(where, datetime.now(timezone.utc)), limit_scan=bound,
                statement_timeout_ms=timeout_ms,
            ).summary()  # fmt: skip
        except PgqError as exc:
            said = f"error: {exc}"
        took_ms = (time.perf_counter() - started) * 1000
        left = searches_left(dsn)
        # within the timeout (plus connecting and the cancel's round trip), one line, nothing left
        held = took_ms < timeout_ms + 1000 and "\n" not in said and not left
        ok = ok and held
        print(
            f"  bound {bound or 'none':>7}  timeout {timeout_ms:>6} ms  took {took_ms:8.1f} ms"
            f"  search sessions left {len(left)}  {'ok' if held else 'FAILED'}: {said}"
        )
    return ok


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn")
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--stock", help="a framework kind: its stock schema instead of pgq-top's table")
    ap.add_argument("--rows", type=int, default=2_000_000, help="with --stock")
    ap.add_argument("--timeout-ms", type=int, default=50, help="with --stock: the short timeout")
    ap.add_argument("--buried", action="store_true", help="2,000 old dead jobs under --sizes newer ones")
    args = ap.parse_args()
    if args.buried:
        with measured_server(args.dsn) as (dsn, version):
            print(f"PostgreSQL {version}")
            where = 'state:dead error:~"invalid card"'
            for size in (int(s) for s in args.sizes.split(",")):
                bury(dsn, size)
                for bound, note, indexed in (
                    (100_000, "newest N only", False),
                    (100_000, "", True),
                    (None, "", True),
                ):
                    took, summary = timed(dsn, where, bound, indexed)
                    print(
                        f"{size:>9,} newer  bound {bound or 'none':>7}  {took * 1000:8.1f} ms"
                        f"  {note}: {summary}"
                    )
        return
    if args.stock:
        with measured_server(args.dsn) as (dsn, version):
            print(f"PostgreSQL {version}")
            sys.exit(0 if stock(dsn, args.stock, args.rows, args.timeout_ms) else 1)
    with measured_server(args.dsn) as (dsn, version):
        print(f"PostgreSQL {version}")
        for size in (int(s) for s in args.sizes.split(",")):
            fill(dsn, size)
            runs = [
                ('error:~"connection refused" state:dead', 100_000, "newest N only", False),
                ('error:~"connection refused" state:dead', 100_000, "through the dead index", True),
                ('error:~"connection refused" state:dead', None, "", True),
                ("args.customer.id:42", None, "no GIN", True),
            ]
            for where, bound, note, indexed in runs:
                took, summary = timed(dsn, where, bound, indexed)
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
