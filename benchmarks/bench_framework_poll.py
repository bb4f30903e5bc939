"""The framework dialects' poll cost against table size: Graphile Worker, pg-boss, procrastinate, pgqueuer.

    python benchmarks/bench_framework_poll.py [--dsn DSN] [--sizes 10000,5000000] [--runs 15]
                                              [--only graphile-worker,pg-boss,procrastinate,pgqueuer]

Per framework and size, a fresh database: the schema installed with the framework's own tool (the
clients of tests/frameworks: `npm ci` in tests/frameworks/node first), then rows inserted by SQL in the
shape a long-lived install accumulates, over 10 queues (user triggers off during the fill, so no NOTIFY
storm or event rows): where the framework keeps finished jobs (pg-boss, procrastinate), 90% of them
are finished; where it deletes them (Graphile Worker, pgqueuer), 90% are dead jobs kept for a human.
The rest: 6% ready, 2% scheduled, 1-2% running (a fifth stuck), 1% dead. Then the indexes the
dialect's own advice names are created, VACUUM ANALYZE, CHECKPOINT, and the dialect's statements
(counts with the monitor's cap, leases, dead jobs) and the whole Monitor.collect() (which adds
the server-wide panels: table health, vacuum progress, sessions) are timed, median of --runs after five
warm-ups, the sizes timed in turns (all built first, so load on the machine falls on each alike),
beside the full-scan `GROUP BY` a naive dashboard runs, in the same run. Prints the queue statements'
time at the largest size over the smallest (the issue asks for < 2).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import psycopg
from common import measured_server
from psycopg import sql
from psycopg.conninfo import make_conninfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from frameworks.cases import follow_index_advice
from frameworks.graphile_client import Graphile
from frameworks.harness import create_runs_table
from frameworks.pgboss_client import PgBoss
from frameworks.pgqueuer_client import Pgqueuer
from frameworks.procrastinate_client import Procrastinate

from pgq_tui.db.introspect import run
from pgq_tui.detection import find_queues
from pgq_tui.monitor.collect import Monitor

# g: row number; b: its bucket 0..99 (90 finished/dead, 6 ready, 2 scheduled, 1 running, 1 dead);
# q: one of 10 queues, by a hash of g (so no queue's share depends on its bucket)
SERIES = (
    "generate_series(1, %(n)s) g,"
    " LATERAL (SELECT mod(g, 100) AS b, 'q' || mod(abs(hashint4(g::int)), 10) AS q) x"
)

GRAPHILE = f"""
INSERT INTO graphile_worker._private_tasks (identifier)
SELECT 'q' || i FROM generate_series(0, 9) i ON CONFLICT DO NOTHING;
ALTER TABLE graphile_worker._private_jobs DISABLE TRIGGER USER;
INSERT INTO graphile_worker._private_jobs (task_id, payload, run_at, attempts, max_attempts, last_error,
                                           locked_at, locked_by)
SELECT t.id, '{{}}',
       CASE WHEN b BETWEEN 96 AND 97 THEN now() + interval '1 hour' ELSE now() - interval '1 minute' END,
       CASE WHEN b < 90 OR b = 99 THEN 3 WHEN b = 98 THEN 1 ELSE 0 END, 3,
       CASE WHEN b < 90 OR b = 99 THEN 'boom' END,
       CASE WHEN b = 98 AND mod(g / 100, 5) = 0 THEN now() - interval '5 hours'
            WHEN b = 98 THEN now() - interval '1 minute' END,
       CASE WHEN b = 98 THEN 'pool-bench' END
FROM {SERIES} JOIN graphile_worker._private_tasks t ON t.identifier = x.q;
ALTER TABLE graphile_worker._private_jobs ENABLE TRIGGER USER
"""
GRAPHILE_SCAN = """SELECT task_id, locked_at IS NULL, attempts >= max_attempts, count(*)
FROM graphile_worker._private_jobs GROUP BY 1, 2, 3"""

PGBOSS = f"""
INSERT INTO pgboss.job (name, data, state, start_after, started_on, expire_in, completed_on, output)
SELECT q, '{{}}',
       (CASE WHEN b < 90 THEN 'completed' WHEN b < 98 THEN 'created' WHEN b = 98 THEN 'active'
             ELSE 'failed' END)::pgboss.job_state,
       CASE WHEN b BETWEEN 96 AND 97 THEN now() + interval '1 hour' ELSE now() - interval '1 minute' END,
       -- a stuck job started long ago (its worker died), as Graphile's and pgqueuer's below
       CASE WHEN b = 98 AND mod(g / 100, 5) = 0 THEN now() - interval '5 hours'
            WHEN b < 90 OR b >= 98 THEN now() - interval '1 minute' END,
       interval '15 minutes',
       CASE WHEN b < 90 OR b = 99 THEN now() END,
       CASE WHEN b = 99 THEN '{{"message": "boom"}}'::jsonb END
FROM {SERIES}
"""
PGBOSS_SCAN = "SELECT name, state, count(*) FROM pgboss.job GROUP BY 1, 2"

PROCRASTINATE = f"""
INSERT INTO procrastinate_workers DEFAULT VALUES;
ALTER TABLE procrastinate_jobs DISABLE TRIGGER USER;
INSERT INTO procrastinate_jobs (queue_name, task_name, args, status, scheduled_at, attempts, worker_id)
SELECT q, 'job', '{{}}',
       (CASE WHEN b < 90 THEN 'succeeded' WHEN b < 98 THEN 'todo' WHEN b = 98 THEN 'doing'
             ELSE 'failed' END)::procrastinate_job_status,
       CASE WHEN b BETWEEN 96 AND 97 THEN now() + interval '1 hour' END, 1,
       -- a stalled job's worker row has been pruned by the live workers: worker_id NULL
       CASE WHEN b = 98 AND mod(g / 100, 5) <> 0 THEN (SELECT max(id) FROM procrastinate_workers) END
FROM {SERIES};
ALTER TABLE procrastinate_jobs ENABLE TRIGGER USER
"""
PROCRASTINATE_SCAN = "SELECT queue_name, status, count(*) FROM procrastinate_jobs GROUP BY 1, 2"

PGQUEUER = f"""
ALTER TABLE pgqueuer DISABLE TRIGGER USER;
INSERT INTO pgqueuer (priority, entrypoint, payload, status, execute_after, heartbeat, queue_manager_id)
SELECT 0, q, 'x',
       (CASE WHEN b < 90 OR b = 99 THEN 'failed' WHEN b < 98 THEN 'queued'
             ELSE 'picked' END)::pgqueuer_status,
       CASE WHEN b BETWEEN 96 AND 97 THEN now() + interval '1 hour' ELSE now() - interval '1 minute' END,
       CASE WHEN b = 98 AND mod(g / 100, 5) = 0 THEN now() - interval '5 minutes' ELSE now() END,
       CASE WHEN b = 98 THEN gen_random_uuid() END
FROM {SERIES};
ALTER TABLE pgqueuer ENABLE TRIGGER USER
"""
PGQUEUER_SCAN = "SELECT entrypoint, status, count(*) FROM pgqueuer GROUP BY 1, 2"

FRAMEWORKS: dict[str, tuple[Callable[[str], object], str, str]] = {
    "graphile-worker": (Graphile, GRAPHILE, GRAPHILE_SCAN),
    "pg-boss": (PgBoss, PGBOSS, PGBOSS_SCAN),
    "procrastinate": (Procrastinate, PROCRASTINATE, PROCRASTINATE_SCAN),
    "pgqueuer": (Pgqueuer, PGQUEUER, PGQUEUER_SCAN),
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


def interleaved_median_ms(fns: dict[int, Callable[[], object]], runs: int) -> dict[int, float]:
    """Each fn's median, the fns timed in turns (five warm-ups each first)."""
    for fn in fns.values():
        for _ in range(5):
            fn()
    times: dict[int, list[float]] = {n: [] for n in fns}
    for _ in range(runs):
        for n, fn in fns.items():
            t = time.perf_counter()
            fn()
            times[n].append((time.perf_counter() - t) * 1000)
    return {n: statistics.median(ts) for n, ts in times.items()}


def build(server_dsn: str, kind: str, n: int) -> str:
    """A fresh database with the framework's schema (its own tool), n rows and the advised indexes."""
    name = f"bench_{kind.replace('-', '_')}_{n}_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = make_conninfo(server_dsn, dbname=name)
    create_runs_table(dsn)
    driver, fill, _ = FRAMEWORKS[kind]
    driver(dsn).install()  # type: ignore[attr-defined]
    with psycopg.connect(dsn, autocommit=True) as conn:
        for statement in fill.split(";\n"):
            conn.execute(statement, {"n": n})  # type: ignore[call-overload]
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
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    os.environ["PGQ_TEST_QUEUES"] = ",".join(f"q{i}" for i in range(10))  # pg-boss: one partition each
    worst = 0.0
    with measured_server(args.dsn) as (server_dsn, version):
        print(f"PostgreSQL {version}; the framework dialects, advised indexes created")
        for kind in args.only.split(","):
            # Every size is built first and then timed in turns, run by run, so a burst of load on this
            # shared machine falls on both sizes alike rather than on whichever was timed during it.
            dsns = {n: build(server_dsn, kind, n) for n in sizes}
            try:
                targets = {n: find_queues(dsn, kind=kind)[0] for n, dsn in dsns.items()}
                with ExitStack() as stack:
                    polls: dict[int, Callable[[], object]] = {}
                    for n, dsn in dsns.items():
                        monitor = stack.enter_context(Monitor(dsn, targets[n].model, read_only=True))
                        snap = monitor.collect()
                        assert not snap.errors, snap.errors
                        polls[n] = monitor.collect
                    poll = interleaved_median_ms(polls, args.runs)
                # the monitors are closed: their background exact counts no longer compete for the CPU
                with ExitStack() as stack:
                    queue_polls: dict[int, Callable[[], object]] = {}
                    refs: dict[int, float] = {}
                    for n, dsn in dsns.items():
                        model = targets[n].model
                        statements = [s for s in (*model.counts, model.leases, model.dead) if s]
                        conn = stack.enter_context(psycopg.connect(dsn, autocommit=True))
                        queue_polls[n] = lambda c=conn, ss=statements: [
                            run(c, s, cap1=501, rows=50) for s in ss
                        ]
                        refs[n] = median_ms(
                            lambda c=conn, q=FRAMEWORKS[kind][2]: c.execute(q).fetchall(),
                            max(3, args.runs // 3),
                        )
                    results = interleaved_median_ms(queue_polls, args.runs)
            finally:
                for dsn in dsns.values():
                    drop(server_dsn, dsn)
            for n in sizes:
                print(
                    f"{kind:>16} {n:>10,} rows: queue statements {results[n]:6.1f} ms"
                    f"   whole collect() {poll[n]:6.1f} ms   full-scan GROUP BY {refs[n]:7.1f} ms"
                )
            ratio = results[max(sizes)] / results[min(sizes)]
            worst = max(worst, ratio)
            print(
                f"{kind:>16} queue statements at {max(sizes):,} rows / at {min(sizes):,}: {ratio:.2f}"
                " (target < 2)"
            )
        return 0 if worst < 2 else 1


if __name__ == "__main__":
    sys.exit(main())
