"""River, Oban and Solid Queue: each dialect's poll cost at 10k and 5M rows, on each framework's own schema.

    python benchmarks/bench_dialects.py [--dsn DSN] [--sizes 10000,5000000] [--runs 15] [--only river,...]

For each framework and size, a database (`bench_<kind>_<size>`) gets the framework's schema from its own
migrations (River's own migrator, the Go program in tests/frameworks/river; Oban's and Solid Queue's
migration DDL in tests/dialect_cases/ddl/), then one INSERT ... SELECT generate_series per state, over 10
queues, with the framework's btree indexes built after the load (faster than maintaining them during
it; the GIN indexes on args/metadata, which no poll reads, are left out of the 5M load) and VACUUM
ANALYZE. The active set is the same at every size (2,000 ready, 1,000 scheduled, 150 running, 50 stuck);
10% of the rows are dead and the rest done, as in a busy queue that keeps finished jobs.

It times Monitor.collect() (every count statement, the lease and dead lists, the table and
session panels; median of --runs, the sizes polled in turn, once the background exact count that counts above
the cap ask for has landed: its own cost, on its own connection, is printed beside) and, in the same
run, the full-scan reference a naive dashboard runs (`SELECT queue, state, count(*) ... GROUP BY 1, 2`).
It prints the count statements' plans' sequential scans with the table's size (only small tables, such
as the in-flight claimed executions, may be read that way) and the largest/smallest ratio of collect(),
which must stay under 2.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg
from common import measured_server
from psycopg import sql
from psycopg.conninfo import make_conninfo

from pgq_tui.detection import find_queues
from pgq_tui.monitor.collect import Monitor

TESTS = Path(__file__).resolve().parent.parent / "tests"
DDL = TESTS / "dialect_cases" / "ddl"
ACTIVE = {"ready": 2_000, "scheduled": 1_000, "running": 150, "stuck": 50}
Q = "'q' || mod(g, 10)"  # ten queues

# One INSERT ... SELECT generate_series per state: (native state, attempt, seconds from now of the run
# time per row, minutes since the attempt began (None: never attempted), finalized/discarded/done).
STATES = {
    "ready": ("available", 0, -1, None),
    "scheduled": ("scheduled", 0, 1, None),
    "running": ("running", 1, -1, 1),
    "stuck": ("running", 1, -1, 120),
    "dead": ("discarded", 25, -1, 1440),
    "done": ("completed", 1, -1, 1440),
}
RIVER_FILL = """
INSERT INTO river_job (state, queue, kind, args, max_attempts, attempt, scheduled_at, attempted_at,
                       attempted_by, finalized_at, errors)
SELECT %(state)s::river_job_state, 'q' || mod(g, 10), 'sort', '{}', 25, %(attempt)s,
       now() + make_interval(secs => %(sign)s * g), now() - make_interval(mins => %(ago)s),
       CASE WHEN %(ago)s IS NOT NULL THEN ARRAY['host_2026'] END,
       CASE WHEN %(state)s IN ('discarded', 'completed') THEN now() - make_interval(secs => g) END,
       CASE WHEN %(state)s = 'discarded' THEN ARRAY[jsonb_build_object('error', 'boom')] END
FROM generate_series(1, %(n)s) g
"""
OBAN_STATE = {"available": "available", "scheduled": "scheduled", "running": "executing",
              "discarded": "discarded", "completed": "completed"}  # fmt: skip
OBAN_FILL = """
INSERT INTO oban_jobs (state, queue, worker, args, attempt, max_attempts, scheduled_at, attempted_at,
                       attempted_by, discarded_at, completed_at, errors)
SELECT %(state)s::oban_job_state, 'q' || mod(g, 10), 'W', '{}', least(%(attempt)s, 20), 20,
       timezone('UTC', now()) + make_interval(secs => %(sign)s * g),
       timezone('UTC', now()) - make_interval(mins => %(ago)s),
       CASE WHEN %(ago)s IS NOT NULL THEN ARRAY['node', 'uuid'] END,
       CASE WHEN %(state)s = 'discarded' THEN timezone('UTC', now()) - make_interval(secs => g) END,
       CASE WHEN %(state)s = 'completed' THEN timezone('UTC', now()) - make_interval(secs => g) END,
       CASE WHEN %(state)s = 'discarded' THEN ARRAY[jsonb_build_object('error', 'boom')] ELSE '{}' END
FROM generate_series(1, %(n)s) g
"""
SQ_NOW = "(now() AT TIME ZONE 'UTC')"
SQ_JOBS = f"""INSERT INTO solid_queue_jobs (queue_name, class_name, arguments, scheduled_at, finished_at,
                                           created_at, updated_at)
    SELECT {Q}, %(state)s::text, '{{"executions": 0}}', {SQ_NOW},
           CASE WHEN %(state)s::text = 'done' THEN {SQ_NOW} END, {SQ_NOW}, {SQ_NOW}
    FROM generate_series(1, %(n)s) g"""
SQ_EXECUTIONS = {
    "ready": f"""INSERT INTO solid_queue_ready_executions (job_id, queue_name, priority, created_at)
        SELECT id, queue_name, 0, {SQ_NOW} FROM solid_queue_jobs WHERE class_name = 'ready'""",
    "scheduled": f"""INSERT INTO solid_queue_scheduled_executions (job_id, queue_name, priority, scheduled_at,
                                                                   created_at)
        SELECT id, queue_name, 0, {SQ_NOW} + interval '1 hour', {SQ_NOW} FROM solid_queue_jobs
        WHERE class_name = 'scheduled'""",
    "running": f"""INSERT INTO solid_queue_claimed_executions (job_id, process_id, created_at)
        SELECT id, 1, {SQ_NOW} FROM solid_queue_jobs WHERE class_name = 'running'""",
    "stuck": f"""INSERT INTO solid_queue_claimed_executions (job_id, process_id, created_at)
        SELECT id, 2, {SQ_NOW} FROM solid_queue_jobs WHERE class_name = 'stuck'""",
    "dead": f"""INSERT INTO solid_queue_failed_executions (job_id, error, created_at)
        SELECT id, '{{"exception_class": "RuntimeError", "message": "boom"}}', {SQ_NOW} FROM solid_queue_jobs
        WHERE class_name = 'dead'""",
}
SQ_PROCESSES = f"""INSERT INTO solid_queue_processes (id, kind, last_heartbeat_at, pid, hostname, created_at,
                                                     name)
    VALUES (1, 'Worker', {SQ_NOW}, 101, 'app-1', {SQ_NOW}, 'w1'),
           (2, 'Worker', {SQ_NOW} - interval '10 minutes', 102, 'app-1', {SQ_NOW}, 'w2')"""


@dataclass(frozen=True)
class Framework:
    kind: str
    ddl: str
    tables: tuple[str, ...]  # tables whose btree indexes are built after the load
    reference: str  # the naive full-scan count


FRAMEWORKS = (
    Framework("river", "", ("river_job",),  # River's own migrator
              "SELECT queue, state, count(*) FROM river_job GROUP BY 1, 2"),
    Framework("oban", "oban.sql", ("oban_jobs",),
              "SELECT queue, state, count(*) FROM oban_jobs GROUP BY 1, 2"),
    Framework(
        "solid-queue",
        "solid_queue.sql",
        ("solid_queue_jobs", "solid_queue_ready_executions", "solid_queue_scheduled_executions",
         "solid_queue_claimed_executions", "solid_queue_failed_executions"),
        "SELECT queue_name, finished_at IS NULL, count(*) FROM solid_queue_jobs GROUP BY 1, 2",
    ),
)  # fmt: skip


def sizes_of(n: int) -> dict[str, int]:
    dead = n // 10
    return {**ACTIVE, "dead": dead, "done": n - dead - sum(ACTIVE.values())}


def load(conn: psycopg.Connection, fw: Framework, n: int) -> None:
    if fw.ddl:
        conn.execute((DDL / fw.ddl).read_text())
    else:  # River: its own migrator (rivermigrate), built by the tests' driver
        sys.path.insert(0, str(TESTS))
        from frameworks.river_client import River

        River(conn.info.dsn, schema="public").install()
    # secondary btree indexes are rebuilt after the load; GIN ones (args, metadata) are left out
    indexes = conn.execute(
        """SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid), am.amname
           FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
           WHERE i.indrelid = ANY(%s::regclass[]) AND NOT i.indisprimary""",
        (list(fw.tables),),
    ).fetchall()
    for name, _, _ in indexes:
        conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
    counts = sizes_of(n)
    if fw.kind == "solid-queue":
        conn.execute(SQ_PROCESSES)
        for state, k in counts.items():
            conn.execute(SQ_JOBS, {"state": state, "n": k})
        for stmt in SQ_EXECUTIONS.values():
            conn.execute(stmt)
    else:
        fill = RIVER_FILL if fw.kind == "river" else OBAN_FILL
        for state, k in counts.items():
            native, attempt, sign, ago = STATES[state]
            if fw.kind == "oban":
                native = OBAN_STATE[native]
            params = {"state": native, "attempt": attempt, "sign": sign, "ago": ago, "n": k}
            conn.execute(fill, params)
    for _, definition, method in indexes:
        if method == "btree":
            conn.execute(definition)
    conn.execute("VACUUM ANALYZE")


def seq_scans(conn: psycopg.Connection, statement) -> set[str]:
    """Relations a statement's plan reads with a sequential scan."""
    plan = conn.execute(
        sql.SQL("EXPLAIN (FORMAT JSON) ") + statement.compose(), {"cap1": 501, "rows": 50}
    ).fetchone()[0]  # type: ignore[index]
    found: set[str] = set()

    def walk(node: dict) -> None:
        if node.get("Node Type") == "Seq Scan":
            name = node["Relation Name"]
            rows = conn.execute(
                "SELECT reltuples::bigint FROM pg_class WHERE relname = %s", (name,)
            ).fetchone()
            found.add(f"{name} ({max(0, rows[0]) if rows else '?'} rows)")
        for child in node.get("Plans", ()):
            walk(child)

    walk((json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"])
    return found


def median_ms(fn, runs: int) -> float:
    for _ in range(2):
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def polls_in_turn(targets: dict[int, str], fw: Framework, runs: int) -> dict[int, tuple[float, float | None]]:
    """size -> (poll ms, background exact count ms). The sizes are polled in turn, so the machine's
    noise hits each alike. Each poll is timed alone: the background exact count the first poll asks
    for (counts above the cap) runs first, on its own connection, and is reported beside."""
    monitors = {}
    for n, dsn in targets.items():
        (target,) = find_queues(dsn, kind=fw.kind)
        monitors[n] = Monitor(
            dsn, target.model, statement_timeout_ms=60_000, count_budget_ms=600_000, count_interval_s=86_400
        )
    try:
        background: dict[int, float | None] = {}
        for n, monitor in monitors.items():
            snap = monitor.collect()
            if snap.errors:
                raise SystemExit(f"{fw.kind}: collect() reported errors: {snap.errors}")
            monitor.settle(600)
            counted = monitor.collect().counts
            background[n] = counted.cost_ms if counted is not None else None
            monitor.collect()
        times: dict[int, list[float]] = {n: [] for n in monitors}
        for _ in range(runs):
            for n, monitor in monitors.items():
                t = time.perf_counter()
                monitor.collect()
                times[n].append((time.perf_counter() - t) * 1000)
        return {n: (statistics.median(times[n]), background[n]) for n in monitors}
    finally:
        for monitor in monitors.values():
            monitor.close()


def reference(dsn: str, fw: Framework, runs: int) -> tuple[float, set[str]]:
    """(the full-scan reference's median ms, seq scans in the count plans)."""
    (target,) = find_queues(dsn, kind=fw.kind)
    with psycopg.connect(dsn, autocommit=True) as conn:
        ref_ms = median_ms(lambda: conn.execute(fw.reference).fetchall(), max(3, runs // 5))
        scans = set().union(*(seq_scans(conn, s) for s in target.model.counts))
    return ref_ms, scans


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn")
    ap.add_argument("--sizes", default="10000,5000000")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--only", help="comma-separated kinds (river, oban, solid-queue)")
    ap.add_argument("--keep", action="store_true", help="keep the bench_* databases")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    chosen = [f for f in FRAMEWORKS if not args.only or f.kind in args.only.split(",")]
    worst = 0.0
    with measured_server(args.dsn) as (dsn, version):
        print(
            f"PostgreSQL {version}; Monitor.collect() median of {args.runs} runs, sizes polled in"
            f" turn; active set {ACTIVE}"
        )
        for fw in chosen:
            targets: dict[int, str] = {}
            for n in sizes:
                name = f"bench_{fw.kind.replace('-', '_')}_{n}"
                with psycopg.connect(dsn, autocommit=True) as admin:
                    admin.execute(
                        sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                    )
                    admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
                targets[n] = make_conninfo(dsn, dbname=name)
                started = time.perf_counter()
                with psycopg.connect(targets[n], autocommit=True) as conn:
                    load(conn, fw, n)
                print(
                    f"{fw.kind:<12} {n:>10,} rows built in {time.perf_counter() - started:.0f} s", flush=True
                )
            polls = polls_in_turn(targets, fw, args.runs)
            for n in sizes:
                ref_ms, scans = reference(targets[n], fw, args.runs)
                poll_ms, background_ms = polls[n]
                background = f"{background_ms:8.1f} ms" if background_ms is not None else "     n/a   "
                print(
                    f"{fw.kind:<12} {n:>10,} rows  poll {poll_ms:7.2f} ms   full-scan reference"
                    f" {ref_ms:9.2f} ms   background exact count {background}"
                    f"   seq scans in counts: {', '.join(sorted(scans)) or 'none'}",
                    flush=True,
                )
            if not args.keep:
                with psycopg.connect(dsn, autocommit=True) as admin:
                    for n in sizes:
                        name = f"bench_{fw.kind.replace('-', '_')}_{n}"
                        admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
            ratio = polls[max(sizes)][0] / polls[min(sizes)][0]
            worst = max(worst, ratio)
            print(f"{fw.kind:<12} poll {max(sizes):,}/{min(sizes):,} ratio: {ratio:.2f} (must stay under 2)")
    return 0 if worst < 2 else 1


if __name__ == "__main__":
    sys.exit(main())
