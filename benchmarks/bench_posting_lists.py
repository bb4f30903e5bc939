"""Why the poll's count walks cost what they do on the stock tables: the dead entries at the front of
each queue's ready range, kept alive by btree deduplication (#35).

    python benchmarks/bench_posting_lists.py [--kind pg-boss|seed-jobs] [--dsn DSN] [--table-dsn DSN]
                                             [--size 10000000] [--queues 50] [--polls 120]
                                             [--warm-s 20] [--active 1000]

pg-boss's fetch index job_i14 is (name, state, blocked, start_after), the seed's jobs_pending_idx
(queue, run_at): neither ends in a unique column. Jobs inserted by one statement share start_after
(run_at: its now()), so their entries are duplicates, and btree deduplication merges them into
posting lists. Each fetched job leaves a dead TID at the
front of its queue's range. A scan that finds a dead TID marks its index entry LP_DEAD, so the next
scan skips it without a heap visit; but a posting list is one entry, marked dead only when every TID
in it is dead. So until the whole posting list is fetched, every walk of the range (pg-boss's fetch
and the poll's counts alike) visits the heap for each of its dead TIDs again.

This measures that, twice on one table under the kind's own fleet (bench_fresh.py's: pg-boss's own
client, or the seed's claim): with the index as built (deduplicate_items on, the default), then
rebuilt with deduplicate_items = off (REINDEX), then put back as it was. For each: `--polls` Monitor
polls at 1 Hz (median, p95), the heap visits of one queue's ready walk just before each poll
(EXPLAIN ANALYZE, first row only: the dead entries before the first live one), and with
pg_stat_statements the means of the fleet's claim and of the poll's walks. Then the ratios, off / on.

pgq-top never changes a table it does not own; the `off` run is what an operator may choose for
their own index, measured, not something the monitor does.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg
from bench_fresh import Fleet, PgBossFleet, SeedFleet, keep_active, on_table, pct
from psycopg import sql

from pgq_tui.detection import find_queues
from pgq_tui.monitor.collect import Monitor

STATEMENTS = """SELECT mean_exec_time, calls, regexp_replace(query, '\\s+', ' ', 'g')
FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"""


@dataclass(frozen=True)
class Kind:
    index: sql.Identifier  # the index the ready walks read
    walk: str  # EXPLAIN ANALYZE of one queue's ready walk to its first row, %s the queue
    # what each measured statement starts with (its text normalized to single spaces); the most called
    # of each is the one measured (the background counter runs the poll's statements' kin far less often)
    statements: dict[str, str]


KINDS = {
    "pg-boss": Kind(
        sql.Identifier("pgboss", "job_common_i14"),
        "EXPLAIN (ANALYZE, COSTS OFF) SELECT j.start_after FROM pgboss.job j WHERE j.name = %s"
        " AND j.state = 'created' AND NOT j.blocked AND j.start_after <= now()"
        " ORDER BY j.start_after LIMIT 1",
        {
            "the fleet's claim (pg-boss's fetch)": "WITH next AS ( SELECT j.id FROM pgboss.job_common",
            "the poll's counts": "SELECT q.name AS queue, least(",
            "the poll's active walk": "WITH active AS MATERIALIZED (",
        },
    ),
    "seed-jobs": Kind(
        sql.Identifier("public", "jobs_pending_idx"),
        "EXPLAIN (ANALYZE, COSTS OFF) SELECT run_at FROM jobs WHERE queue = %s AND status = 'pending'"
        " AND run_at <= now() ORDER BY run_at LIMIT 1",
        {
            "the fleet's claim": "UPDATE jobs SET status = 'running'",
            "the poll's counts": "WITH RECURSIVE qs AS (",
        },
    ),
}


@dataclass(frozen=True)
class Run:
    reindex_s: float
    walls: list[float]  # each poll's collect(), ms
    visits: list[int]  # one queue's walk to its first ready job just before each poll: heap visits
    means: dict[str, float]  # pg_stat_statements over the polls, ms (empty without the extension)


def heap_visits(conn: psycopg.Connection, kind: Kind, queue: str) -> int:
    """The heap visits of the walk's index-only scan; a plan without one has no such figure: the
    measurement's precondition fails, loudly, never as 0."""
    plan = [line for (line,) in conn.execute(kind.walk, (queue,)).fetchall()]
    for line in plan:
        if "Heap Fetches:" in line:
            return int(line.split("Heap Fetches:")[1].split()[0])
    raise RuntimeError("the ready walk is not an index-only scan here:\n" + "\n".join(plan))


def rebuild(conn: psycopg.Connection, index: sql.Identifier, dedup: bool) -> float:
    t = time.perf_counter()
    setting = sql.SQL("on" if dedup else "off")
    conn.execute(sql.SQL("ALTER INDEX {} SET (deduplicate_items = {})").format(index, setting))
    conn.execute(sql.SQL("REINDEX INDEX {}").format(index))
    return time.perf_counter() - t


def statements(conn: psycopg.Connection, kind: Kind) -> dict[str, float]:
    """The means (ms) of the fleet's claim and the poll's walks since the reset, by what they are."""
    try:
        rows = conn.execute(STATEMENTS).fetchall()
    except psycopg.errors.UndefinedTable:
        return {}
    best: dict[str, tuple[int, float]] = {}
    for mean, calls, query in rows:
        for label, start in kind.statements.items():
            if str(query).startswith(start) and int(calls) > best.get(label, (0, 0.0))[0]:
                best[label] = (int(calls), float(mean))
    return {label: mean for label, (_, mean) in best.items()}


def fleet_on(dsn: str, name: str, queues: list[str], lifetime_s: float, log: Path) -> Fleet:
    if name == "pg-boss":
        return PgBossFleet(dsn, queues, 200, lifetime_s, log)
    return SeedFleet(dsn, queues, 200, lifetime_s)


def run_mode(
    dsn: str, name: str, dedup: bool, queues: list[str], polls: int, warm_s: float, log: Path
) -> Run:
    kind = KINDS[name]
    with psycopg.connect(dsn, autocommit=True) as conn:
        took = rebuild(conn, kind.index, dedup)
        fleet = fleet_on(dsn, name, queues, polls + warm_s + 60, log)
        try:
            model = find_queues(dsn, kind=name)[0].model
            with Monitor(dsn, model, read_only=True) as monitor:
                warm_end = time.monotonic() + warm_s
                while time.monotonic() < warm_end:
                    monitor.collect()
                    time.sleep(1.0)
                with contextlib.suppress(psycopg.errors.UndefinedFunction):  # no pg_stat_statements
                    conn.execute("SELECT pg_stat_statements_reset()")
                walls: list[float] = []
                visits: list[int] = []
                for _ in range(polls):
                    visits.append(heap_visits(conn, kind, queues[0]))
                    t = time.perf_counter()
                    monitor.collect()
                    walls.append((time.perf_counter() - t) * 1000)
                    time.sleep(max(0.0, 1.0 - walls[-1] / 1000))
                means = statements(conn, kind)
        finally:
            fleet.stop()
    return Run(took, walls, visits, means)


def report(label: str, r: Run) -> None:
    print(
        f"{label}: REINDEX {r.reindex_s:.1f} s; poll median {statistics.median(r.walls):.1f} ms,"
        f" p95 {pct(r.walls, 0.95):.1f} ms over {len(r.walls)} polls; one queue's walk to its first ready"
        f" job: heap visits median {statistics.median(r.visits):.0f}, max {max(r.visits)}",
        flush=True,
    )
    for name, mean in r.means.items():
        print(f"  {name}: {mean:.2f} ms mean", flush=True)


def compare(dsn: str, args: argparse.Namespace, queues: list[str]) -> None:
    kind = KINDS[args.kind]
    keep_active(dsn, args.kind, args.active)
    with psycopg.connect(dsn, autocommit=True) as conn:
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        except psycopg.Error as exc:  # a server without it: the poll's figures only
            print(
                f"no pg_stat_statements ({str(exc).splitlines()[0]}): the statements' means are not printed"
            )
    log = Path(args.log_dir) / "bench_posting_lists_fleet.log"
    index = kind.index.as_string()
    on = run_mode(dsn, args.kind, True, queues, args.polls, args.warm_s, log)
    report(f"{args.kind}, {index} with deduplicate_items on (the index as built)", on)
    try:
        off = run_mode(dsn, args.kind, False, queues, args.polls, args.warm_s, log)
        report(f"{args.kind}, {index} with deduplicate_items off (REINDEX)", off)
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("ALTER INDEX {} RESET (deduplicate_items)").format(kind.index))
            conn.execute(sql.SQL("REINDEX INDEX {}").format(kind.index))  # the table as it was built
    ratio = {
        "poll median": (statistics.median(off.walls), statistics.median(on.walls)),
        "poll p95": (pct(off.walls, 0.95), pct(on.walls, 0.95)),
        "walk heap visits, median": (
            float(statistics.median(off.visits)),
            float(statistics.median(on.visits)),
        ),
    }
    for name in kind.statements:
        a, b = off.means.get(name), on.means.get(name)
        if a is not None and b is not None:
            ratio[f"{name}, mean"] = (a, b)
    for name, (a, b) in ratio.items():
        print(f"ratio off / on, {name}: {a:.1f} / {b:.1f} = {a / b if b else float('nan'):.2f}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", choices=sorted(KINDS), default="pg-boss")
    ap.add_argument("--dsn", help="a server to build the table on (default: a private embedded one)")
    ap.add_argument(
        "--table-dsn", help="the kind's database built before (bench_fresh.py's): use it, build nothing"
    )
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--queues", type=int, default=50)
    ap.add_argument("--polls", type=int, default=120)
    ap.add_argument("--warm-s", type=float, default=20.0, help="the fleet's run before the polls count")
    ap.add_argument("--active", type=int, default=1000, help="the fill's running jobs kept running")
    ap.add_argument("--log-dir", default="/tmp", help="where the pg-boss fleet's log goes")
    args = ap.parse_args()
    print("load average (1, 5, 15 min) at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()), flush=True)
    queues = [f"q{i}" for i in range(args.queues)]
    os.environ["PGQ_TEST_QUEUES"] = ",".join(queues)  # pg-boss's install creates each queue
    settings = {"shared_preload_libraries": "pg_stat_statements"}
    on_table(
        args.dsn, args.table_dsn, args.kind, args.size, queues, lambda d: compare(d, args, queues), settings
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
