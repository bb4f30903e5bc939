"""The framework dialects' poll cost against table size: Graphile Worker, pg-boss, procrastinate, pgqueuer,
DBOS, good_job.

    python benchmarks/bench_framework_poll.py [--dsn DSN] [--sizes 10000,5000000] [--runs 15]
                          [--only graphile-worker,pg-boss,procrastinate,pgqueuer,dbos,good-job,que]
                                              [--count-cap N]

Per framework and size, a fresh database: the schema installed with the framework's own tool (the
clients of tests/frameworks: `npm ci` in tests/frameworks/node first), then rows inserted by SQL in the
shape a long-lived install accumulates, over 10 queues (tests/frameworks/fills.py): where the
framework keeps finished jobs (pg-boss, procrastinate), 90% of them are finished; where it deletes
them (Graphile Worker, pgqueuer), 90% are dead jobs kept for a human. The rest: 6% ready, 2%
scheduled, 1-2% running (a fifth stuck), 1% dead. Then the indexes the
dialect's own advice names are created, VACUUM ANALYZE, CHECKPOINT, and timed, median of --runs after
five warm-ups, the sizes timed in turns (all built first, so load on the machine falls on each alike):

- the whole Monitor.collect(), what the user waits for each refresh: the queue statements plus
  the server-wide panels (table health, vacuum progress, sessions), with its background exact count
  running beside it as it does in the dashboard;
- each of the dialect's indexed queue statements (counts, leases, dead jobs; a scan runs in the
  background counter at such sizes, not in the poll) on a monitor's own session, as
  collect() runs it (its session settings, prepared generic plans, its count cap and list length), with
  no background count competing;
- the full-scan `GROUP BY` a naive dashboard runs, in the same run.

Prints both at the largest size over the smallest and the load average before and after (the
machine's other work skews absolute times, less so the ratios). Exit 1 when the whole collect()
grows 2x or more: the poll the user waits for must stay flat. The statements' own sum may grow more
from 10k rows, where the counts are below the count cap, to a size where each reaches it (10 queues x
states x cap rows): that growth is bounded by the cap, not by the table, and is printed, not judged.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from common import measured_server
from psycopg import sql
from psycopg.conninfo import make_conninfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from frameworks.cases import follow_index_advice
from frameworks.dbos_client import Dbos
from frameworks.fills import fill
from frameworks.good_job_client import GoodJobSchema
from frameworks.graphile_client import Graphile
from frameworks.harness import create_runs_table
from frameworks.pgboss_client import PgBoss, PgBoss12
from frameworks.pgqueuer_client import Pgqueuer
from frameworks.procrastinate_client import Procrastinate
from frameworks.que_schema import QueSchema

from pgq_tui.detection import find_queues
from pgq_tui.monitor.collect import DEFAULT_COUNT_CAP, Monitor

QUEUES = tuple(f"q{i}" for i in range(10))

GRAPHILE_SCAN = """SELECT task_id, locked_at IS NULL, attempts >= max_attempts, count(*)
FROM graphile_worker._private_jobs GROUP BY 1, 2, 3"""
PGBOSS_SCAN = "SELECT name, state, count(*) FROM pgboss.job GROUP BY 1, 2"
PROCRASTINATE_SCAN = "SELECT queue_name, status, count(*) FROM procrastinate_jobs GROUP BY 1, 2"
PGQUEUER_SCAN = "SELECT entrypoint, status, count(*) FROM pgqueuer GROUP BY 1, 2"
DBOS_SCAN = "SELECT queue_name, status, count(*) FROM dbos.workflow_status GROUP BY 1, 2"
GOOD_JOB_SCAN = """SELECT queue_name, performed_at IS NULL, finished_at IS NULL, error IS NULL, count(*)
FROM good_jobs GROUP BY 1, 2, 3, 4"""


QUE_SCAN = """SELECT queue, finished_at IS NULL, expired_at IS NULL, error_count > 0, count(*)
FROM que_jobs GROUP BY 1, 2, 3, 4"""


K = TypeVar("K")

FRAMEWORKS: dict[str, tuple[Callable[[str], object], str]] = {
    "graphile-worker": (Graphile, GRAPHILE_SCAN),
    "pg-boss": (PgBoss, PGBOSS_SCAN),
    "pg-boss-12": (PgBoss12, PGBOSS_SCAN),  # pg-boss 12.38 on Node 22 (tests/frameworks/fills.py's layout)
    "procrastinate": (Procrastinate, PROCRASTINATE_SCAN),
    "pgqueuer": (Pgqueuer, PGQUEUER_SCAN),
    "dbos": (Dbos, DBOS_SCAN),  # its stock schema: the dialect advises no index
    "good-job": (GoodJobSchema, GOOD_JOB_SCAN),  # advised: the waiting and released indexes
    "que": (QueSchema, QUE_SCAN),  # advised: the waiting index
}


def median_ms(fn: Callable[[], object], runs: int) -> float:
    for _ in range(5):
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def interleaved_median_ms(fns: Mapping[K, Callable[[], object]], runs: int) -> dict[K, float]:
    """Each fn's median, the fns timed in turns (five warm-ups each first)."""
    for fn in fns.values():
        for _ in range(5):
            fn()
    times: dict[K, list[float]] = {key: [] for key in fns}
    for _ in range(runs):
        for key, fn in fns.items():
            t = time.perf_counter()
            fn()
            times[key].append((time.perf_counter() - t) * 1000)
    return {key: statistics.median(ts) for key, ts in times.items()}


def statement_runs(monitor: Monitor) -> dict[str, Callable[[], object]]:
    """Each queue statement of the monitor's dialect, run the way its collect() runs it."""
    model = monitor.model
    # a scan (Statement.indexed False) runs in the background counter above the in-poll threshold
    # (monitor/tiers.py), not in the poll: the poll's own statements are the indexed ones
    statements = [s for s in (*model.counts, model.leases, model.dead) if s is not None and s.indexed]
    params = {"cap1": monitor.count_cap + 1, "rows": monitor.lease_rows}
    # _run: the monitor's own session and execution path, so the plans timed are the poll's plans
    return {s.name.split(".")[-1]: lambda s=s: monitor._run(s, **params) for s in statements}


def build(
    server_dsn: str,
    kind: str,
    n: int,
    advised: bool = True,
    queues: Sequence[str] = QUEUES,
    after_fill: Callable[[str], None] | None = None,
) -> str:
    """A fresh database with the framework's schema (its own tool), n rows over `queues` and
    (`advised`) the advised indexes; `after_fill(dsn)` runs after the fill, before VACUUM ANALYZE."""
    name = f"bench_{kind.replace('-', '_')}_{n}_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = make_conninfo(server_dsn, dbname=name)
    create_runs_table(dsn)
    driver, _ = FRAMEWORKS[kind]
    client = driver(dsn)
    env = getattr(client, "env", None)
    if isinstance(env, dict):  # the Node clients' install creates these queues (pg-boss: createQueue)
        env["PGQ_TEST_QUEUES"] = ",".join(queues)
    client.install()  # type: ignore[attr-defined]
    fill(dsn, kind, n, queues)
    if after_fill is not None:
        after_fill(dsn)
    if advised:
        follow_index_advice(dsn, kind)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        conn.execute("CHECKPOINT")  # the bulk load's dirty pages are written now, not while timing
    return dsn


def drop(server_dsn: str, dsn: str) -> None:
    name = psycopg.conninfo.conninfo_to_dict(dsn)["dbname"]
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(str(name))))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn")
    ap.add_argument("--sizes", default="10000,5000000")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--only", default=",".join(FRAMEWORKS))
    ap.add_argument("--count-cap", type=int, help="the monitor's count cap (default: its own default)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    small, large = min(sizes), max(sizes)
    os.environ["PGQ_TEST_QUEUES"] = ",".join(QUEUES)  # pg-boss: one partition each
    options: dict[str, Any] = {"read_only": True}
    if args.count_cap:
        options["count_cap"] = args.count_cap
    worst = 0.0
    print("load average (1, 5, 15 min) at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    with measured_server(args.dsn) as (server_dsn, version):
        cap = options.get("count_cap", DEFAULT_COUNT_CAP)
        print(f"PostgreSQL {version}; the framework dialects, advised indexes created; count cap {cap:,}")
        for kind in args.only.split(","):
            # Every size is built first and then timed in turns, run by run, so a burst of load on this
            # shared machine falls on both sizes alike rather than on whichever was timed during it.
            dsns = {n: build(server_dsn, kind, n) for n in sizes}
            try:
                targets = {n: find_queues(dsn, kind=kind)[0] for n, dsn in dsns.items()}
                with ExitStack() as stack:
                    polls: dict[int, Callable[[], object]] = {}
                    for n, dsn in dsns.items():
                        monitor = stack.enter_context(Monitor(dsn, targets[n].model, **options))
                        snap = monitor.collect()
                        assert not snap.errors, snap.errors
                        polls[n] = monitor.collect
                    poll = interleaved_median_ms(polls, args.runs)
                # Those monitors are closed, so their background exact counts no longer compete for the
                # CPU; these ones never collect(), so theirs never start.
                with ExitStack() as stack:
                    each: dict[tuple[int, str], Callable[[], object]] = {}
                    refs: dict[int, float] = {}
                    for n, dsn in dsns.items():
                        monitor = stack.enter_context(Monitor(dsn, targets[n].model, **options))
                        for name, fn in statement_runs(monitor).items():
                            each[(n, name)] = fn
                        conn = stack.enter_context(psycopg.connect(dsn, autocommit=True))
                        refs[n] = median_ms(
                            lambda c=conn, q=FRAMEWORKS[kind][1]: c.execute(q).fetchall(),
                            max(3, args.runs // 3),
                        )
                    timed = interleaved_median_ms(each, args.runs)
            finally:
                for dsn in dsns.values():
                    drop(server_dsn, dsn)
            results = {n: sum(ms for (size, _), ms in timed.items() if size == n) for n in sizes}
            for n in sizes:
                print(
                    f"{kind:>16} {n:>10,} rows: whole collect() {poll[n]:6.1f} ms   queue statements"
                    f" {results[n]:6.1f} ms   full-scan GROUP BY {refs[n]:7.1f} ms"
                )
                print(
                    " " * 17
                    + "  ".join(f"{name} {ms:.2f}" for (size, name), ms in timed.items() if size == n)
                )
            ratios = {
                "whole collect()": poll[large] / poll[small],
                "queue statements": results[large] / results[small],
            }
            worst = max(worst, ratios["whole collect()"])
            print(
                f"{kind:>16} at {large:,} rows / at {small:,}: "
                + ", ".join(f"{what} {ratio:.2f}" for what, ratio in ratios.items())
                + " (target < 2 for the whole collect())"
            )
    print("load average (1, 5, 15 min) at end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return 0 if worst < 2 else 1


if __name__ == "__main__":
    sys.exit(main())
