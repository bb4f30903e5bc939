"""pgmq's poll cost against the messages it holds: 50 queues, 10k vs 5M messages in total.

    python benchmarks/bench_pgmq_poll.py [--dsn DSN] [--sizes 10000,5000000] [--queues 50] [--runs 9]

Per size, a fresh database: pgmq's SQL installed by its PyPI client's installer and --queues queues
created with the client (`create_queue`, so each has pgmq's own tables and indexes), then rows
inserted by SQL, spread evenly over the queues, in the shape a long-lived install accumulates: 60%
archived (a_<name>), 30% visible (ready), 5% delayed, 4% in flight, 1% dead by pgq-top's rule
(read_ct >= 5, visible or in flight). Then the read_ct indexes the dialect advises, VACUUM ANALYZE,
CHECKPOINT, and timed, median of --runs after five warm-ups, the sizes timed in turns:

- the whole Monitor.collect() (every panel, its background exact count running beside it);
- the dialect's queue statements (counts, leases, dead) on a monitor's own session, as collect() runs
  them, with no background count competing;
- the full scan a naive dashboard runs (`metrics_all()`, pgmq's own: count(*) of every queue table).

Prints both ratios at the largest size over the smallest (the issue asks for < 2; exit 1 otherwise)
and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import psycopg
from bench_framework_poll import drop, interleaved_median_ms, median_ms, statement_runs
from common import measured_server
from psycopg import sql
from psycopg.conninfo import make_conninfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from frameworks import pgmq_client
from frameworks.cases import follow_index_advice

from pgq_tui.detection import find_queues
from pgq_tui.monitor.collect import Monitor

# (share of a queue's messages, vt relative to now, read_ct): ready, delayed, in flight, dead
SHAPE = (
    (0.30, "-1 minute", 0),
    (0.05, "1 day", 0),
    (0.04, "2 hours", 1),
    (0.005, "-1 minute", 7),
    (0.005, "2 hours", 7),
)
ARCHIVED = 0.60
FILL = """
INSERT INTO {q} (vt, read_ct, enqueued_at, message)
SELECT now() + %(vt)s::interval, %(read_ct)s, now() - interval '1 hour', jsonb_build_object('n', i)
FROM generate_series(1, %(n)s) i
"""
FILL_ARCHIVE = """
INSERT INTO {a} (msg_id, vt, read_ct, enqueued_at, archived_at, message)
SELECT 1000000000 + i, now() - interval '1 hour', 1, now() - interval '2 hours',
       now() - make_interval(secs => i), jsonb_build_object('n', i)
FROM generate_series(1, %(n)s) i
"""


def build(server_dsn: str, n: int, queues: int) -> str:
    name = f"bench_pgmq_{n}_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = make_conninfo(server_dsn, dbname=name)
    pgmq_client.install(dsn)
    names = [f"q{i:02d}" for i in range(queues)]
    with pgmq_client.client(dsn) as client:
        for queue in names:
            client.create_queue(queue)
    per_queue = n // queues
    with psycopg.connect(dsn, autocommit=True) as conn:
        for queue in names:
            q, a = sql.Identifier("pgmq", f"q_{queue}"), sql.Identifier("pgmq", f"a_{queue}")
            for share, vt, read_ct in SHAPE:
                params = {"n": max(1, int(per_queue * share)), "vt": vt, "read_ct": read_ct}
                conn.execute(sql.SQL(FILL).format(q=q), params)
            conn.execute(sql.SQL(FILL_ARCHIVE).format(a=a), {"n": int(per_queue * ARCHIVED)})
    os.environ["PGQ_TOP_PGMQ_DEAD_READS"] = "5"
    follow_index_advice(dsn, "pgmq")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        conn.execute("CHECKPOINT")
    return dsn


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn")
    ap.add_argument("--sizes", default="10000,5000000")
    ap.add_argument("--queues", type=int, default=50)
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    small, large = min(sizes), max(sizes)
    os.environ["PGQ_TOP_PGMQ_DEAD_READS"] = "5"
    print("load average (1, 5, 15 min) at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    with measured_server(args.dsn) as (server_dsn, version):
        dsns = {n: build(server_dsn, n, args.queues) for n in sizes}
        try:
            targets = {n: find_queues(dsn, kind="pgmq")[0] for n, dsn in dsns.items()}
            cap = targets[small].model.count_cap
            print(
                f"PostgreSQL {version}; pgmq {pgmq_client.version()} client, {args.queues} queues;"
                f" count cap {cap} per queue and state"
            )
            with ExitStack() as stack:
                polls: dict[int, Callable[[], object]] = {}
                for n, dsn in dsns.items():
                    monitor = stack.enter_context(Monitor(dsn, targets[n].model, read_only=True))
                    snap = monitor.collect()
                    assert not snap.errors, snap.errors
                    assert len(snap.queues) == args.queues, len(snap.queues)
                    polls[n] = monitor.collect
                poll = interleaved_median_ms(polls, args.runs)
            with ExitStack() as stack:
                each: dict[tuple[int, str], Callable[[], object]] = {}
                refs: dict[int, float] = {}
                for n, dsn in dsns.items():
                    monitor = stack.enter_context(Monitor(dsn, targets[n].model, read_only=True))
                    for name, fn in statement_runs(monitor).items():
                        each[(n, name)] = fn
                    conn = stack.enter_context(psycopg.connect(dsn, autocommit=True))
                    refs[n] = median_ms(
                        lambda c=conn: c.execute("SELECT * FROM pgmq.metrics_all()").fetchall(), 3
                    )
                timed = interleaved_median_ms(each, args.runs)
        finally:
            for dsn in dsns.values():
                drop(server_dsn, dsn)
    results = {n: sum(ms for (size, _), ms in timed.items() if size == n) for n in sizes}
    for n in sizes:
        print(
            f"pgmq {n:>10,} messages: whole collect() {poll[n]:6.1f} ms   queue statements"
            f" {results[n]:6.1f} ms   metrics_all() {refs[n]:7.1f} ms"
        )
        print("      " + "  ".join(f"{name} {ms:.2f}" for (size, name), ms in timed.items() if size == n))
    ratios = {
        "whole collect()": poll[large] / poll[small],
        "queue statements": results[large] / results[small],
    }
    print(
        f"pgmq at {large:,} / at {small:,}: "
        + ", ".join(f"{what} {ratio:.2f}" for what, ratio in ratios.items())
        + " (target < 2)"
    )
    print("load average (1, 5, 15 min) at end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return 0 if max(ratios.values()) < 2 else 1


if __name__ == "__main__":
    sys.exit(main())
