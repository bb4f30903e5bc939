"""A dialect's poll cost against table size: the seed article's `jobs` shape through its mapping.

    python benchmarks/bench_dialect_poll.py [--dsn DSN] [--sizes 10000,5000000] [--runs 25]

Builds the seed's table per size (schema `dialect_<size>`): the seed's own partial index
(queue, run_at) WHERE status = 'pending' plus the one the dashboard asks for, (queue, locked_until)
WHERE status = 'running'; 90% done, 8% pending (a tenth scheduled), 2% running (a fifth expired),
over 10 queues; VACUUM ANALYZE. Times Monitor.collect() on every size in turn (median of
--runs rounds after two warm-ups, once the background exact count above the cap has landed), and the
full-scan `SELECT queue, status, count(*) ... GROUP BY` a naive dashboard runs. Prints the
largest/smallest ratio of collect() (the issue asks for < 2).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from contextlib import ExitStack

import psycopg
from common import measured_server
from psycopg import sql

from pgq_tui.detection import find_queues
from pgq_tui.monitor.collect import Monitor

TABLE = """
CREATE TABLE {jobs} (id bigserial PRIMARY KEY, queue text, payload jsonb, status text DEFAULT 'pending',
                     run_at timestamptz DEFAULT now(), attempts int DEFAULT 0, locked_until timestamptz);
CREATE INDEX ON {jobs} (queue, run_at) WHERE status = 'pending';
CREATE INDEX ON {jobs} (queue, locked_until) WHERE status = 'running';
"""

FILL = """
INSERT INTO {jobs} (queue, payload, status, run_at, attempts, locked_until)
SELECT 'q' || mod(abs(hashint4(g::int)), 10), '{{}}', s.status,
       CASE WHEN s.status = 'pending' AND mod(g, 100) = 90 THEN now() + interval '1 hour'
            ELSE now() - make_interval(secs => mod(g, 3600)) END,
       CASE WHEN s.status = 'pending' THEN 0 ELSE 1 END,
       CASE WHEN s.status = 'running' THEN now() + make_interval(secs => CASE WHEN mod(g / 100, 5) = 0
                                                 THEN -1 - mod(g, 600) ELSE 60 + mod(g, 3600) END) END
FROM generate_series(1, %(n)s) g,
     LATERAL (SELECT CASE WHEN mod(g, 100) < 90 THEN 'done' WHEN mod(g, 100) < 98 THEN 'pending'
                          ELSE 'running' END AS status) s
"""

REFERENCE = "SELECT queue, status, count(*) FROM {jobs} GROUP BY queue, status"


def build(dsn: str, schema: str, n: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP SCHEMA IF EXISTS {s} CASCADE; CREATE SCHEMA {s}").format(s=sql.Identifier(schema))
        )
        jobs = sql.Identifier(schema, "jobs")
        conn.execute(sql.SQL(TABLE).format(jobs=jobs))
        conn.execute(sql.SQL(FILL).format(jobs=jobs), {"n": n})
        conn.execute(sql.SQL("VACUUM ANALYZE {}").format(jobs))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn")
    ap.add_argument("--sizes", default="10000,5000000")
    ap.add_argument("--runs", type=int, default=25)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with measured_server(args.dsn) as (dsn, version), ExitStack() as stack:
        print(f"PostgreSQL {version}; seed `jobs` shape through the seed-jobs mapping dialect")
        monitors = {}
        for n in sizes:
            build(dsn, f"dialect_{n}", n)
            (target,) = find_queues(dsn, kind="seed-jobs", schema=f"dialect_{n}", table="jobs")
            monitor = stack.enter_context(Monitor(dsn, target.model, read_only=True))
            snap = monitor.collect()
            assert not snap.errors, snap.errors
            monitor.settle(120)  # the background exact count above the cap has landed once
            monitors[n] = monitor
        # Interleaved, so the machine's noise (other processes, the background counts) hits every size
        # alike: one poll of each size per round, medians over the rounds.
        polls: dict[int, list[float]] = {n: [] for n in sizes}
        for _ in range(2 + args.runs):
            for n, monitor in monitors.items():
                t = time.perf_counter()
                monitor.collect()
                polls[n].append((time.perf_counter() - t) * 1000)
        conn = stack.enter_context(psycopg.connect(dsn, autocommit=True))
        for n in sizes:
            query = sql.SQL(REFERENCE).format(jobs=sql.Identifier(f"dialect_{n}", "jobs"))
            refs = []
            for _ in range(max(3, args.runs // 5)):
                t = time.perf_counter()
                conn.execute(query).fetchall()
                refs.append((time.perf_counter() - t) * 1000)
            poll = statistics.median(polls[n][2:])
            snap = monitors[n].collect()
            q = snap.queues[0]
            shown = " ".join(
                f"{f} {getattr(q, f)} ({q.accuracy(f)})" for f in ("ready", "running", "stuck")
            )
            ref = statistics.median(refs)
            print(
                f"{n:>10,} rows: collect() {poll:7.1f} ms   full-scan GROUP BY {ref:8.1f} ms   "
                f"{q.queue}: {shown}"
            )
        ratio = statistics.median(polls[max(sizes)][2:]) / statistics.median(polls[min(sizes)][2:])
        print(f"collect() at {max(sizes):,} rows / at {min(sizes):,} rows: {ratio:.2f} (target < 2)")
        for n in sizes:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(f"dialect_{n}")))
        return 0 if ratio < 2 else 1


if __name__ == "__main__":
    sys.exit(main())
