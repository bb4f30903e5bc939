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

This measures that on one table under the kind's own fleet (bench_fresh.py's: pg-boss's own client,
or the seed's claim), the two indexes in turn: beside the index as built (deduplicate_items on, the
default) a twin is built CONCURRENTLY with deduplicate_items = off, both kept up to date by every
write, and before each poll one of them is made the only valid one (pg_index.indisvalid; its table's
plans invalidated), alternating on, off, off, on, ... so that the table's age and the machine's load
fall on both alike. For each poll: the walk of one queue's ready range to its first job (EXPLAIN
ANALYZE: its heap visits), the poll's own counts statement with the poll's own cap (EXPLAIN ANALYZE,
TIMING OFF: its execution time and heap visits), the whole Monitor.collect() (median, p95), and
with pg_stat_statements (reset at each turn) the mean of the fleet's claims in the turn. The plans
are checked to read the index of their turn. Then the ratios, off / on. The twin is dropped and
the index left as it was built.

A sequential run (the index as built for 120 polls, then rebuilt without deduplication for 120 more)
cannot tell this apart: the table ages under the fleet between the two halves, and two such runs
disagreed on the direction by more than the effect.

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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from bench_fresh import Fleet, PgBossFleet, SeedFleet, keep_active, on_table, pct
from psycopg import sql

from pgq_tui.detection import find_queues
from pgq_tui.dialects.introspect import DEFAULTS
from pgq_tui.monitor.collect import Monitor


@dataclass(frozen=True)
class Kind:
    index: tuple[str, str]  # (schema, name): the index the ready walks read
    table: tuple[str, str]  # the table it is on (pg-boss: job_common, the partition)
    walk: str  # EXPLAIN ANALYZE of one queue's ready walk to its first row, %s the queue
    counts: str  # the poll's counts statement that walks the ready range (its name's last part)
    claim: str  # text only the fleet's claim holds, as pg_stat_statements shows it (on one line)


KINDS = {
    "pg-boss": Kind(
        ("pgboss", "job_common_i14"),
        ("pgboss", "job_common"),
        "EXPLAIN (ANALYZE, COSTS OFF) SELECT j.start_after FROM pgboss.job j WHERE j.name = %s"
        " AND j.state = 'created' AND NOT j.blocked AND j.start_after <= now()"
        " ORDER BY j.start_after LIMIT 1",
        "modern_count_queued",
        "WITH next AS ( SELECT j.id FROM pgboss.job_common",
    ),
    "seed-jobs": Kind(
        ("public", "jobs_pending_idx"),
        ("public", "jobs"),
        "EXPLAIN (ANALYZE, COSTS OFF) SELECT run_at FROM jobs WHERE queue = %s AND status = 'pending'"
        " AND run_at <= now() ORDER BY run_at LIMIT 1",
        "count_ready_scheduled_oldest",
        ", attempts = attempts + $",  # constants show as $n there
    ),
}
ON, OFF = "on", "off"


@dataclass
class Turns:
    """What the polls of one index measured, poll by poll."""

    walls: list[float] = field(default_factory=list)  # collect(), ms
    walk_visits: list[int] = field(default_factory=list)  # one queue's walk to its first ready job
    counts_ms: list[float] = field(default_factory=list)  # the poll's counts statement, server time
    counts_visits: list[int] = field(default_factory=list)  # ... and its heap visits
    claims_ms: list[float] = field(default_factory=list)  # the fleet's claims in the turn: their mean


def plan_visits(plan: dict[str, Any], indexes: set[str]) -> int:
    """Heap visits of every index-only scan in a JSON plan; the names of the indexes read go to
    `indexes`."""
    if "Index Name" in plan:
        indexes.add(str(plan["Index Name"]))
    own = int(plan.get("Heap Fetches", 0))  # a node without the figure is no index-only scan
    return own + sum(plan_visits(p, indexes) for p in plan.get("Plans", ()))


def walk_visits(conn: psycopg.Connection, kind: Kind, queue: str, index: str) -> int:
    """The heap visits of the walk's index-only scan of `index`; a plan without one has no such
    figure: the measurement's precondition fails, loudly, never as 0."""
    plan = [line for (line,) in conn.execute(kind.walk, (queue,)).fetchall()]
    if any(f"Index Only Scan using {index} " in line for line in plan):
        for line in plan:
            if "Heap Fetches:" in line:
                return int(line.split("Heap Fetches:")[1].split()[0])
    raise RuntimeError(f"the ready walk is not an index-only scan of {index} here:\n" + "\n".join(plan))


def counts_run(
    conn: psycopg.Connection, query: sql.Composed, params: dict[str, Any], index: str
) -> tuple[float, int]:
    """The counts statement's execution time (ms) and heap visits, checked to read `index`."""
    explain = sql.SQL("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) ") + query
    row = conn.execute(explain, params).fetchone()
    assert row is not None
    plan = row[0][0]
    read: set[str] = set()
    visits = plan_visits(plan["Plan"], read)
    if index not in read:
        raise RuntimeError(f"the counts statement read {sorted(read)}, not {index}")
    return float(plan["Execution Time"]), visits


CLAIMS = """SELECT sum(total_exec_time) / nullif(sum(calls), 0) FROM pg_stat_statements
WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND strpos(regexp_replace(query, '\\s+', ' ', 'g'), %s) > 0"""


def claims_mean(conn: psycopg.Connection, kind: Kind) -> float | None:
    """The mean time (ms) of the fleet's claims since pg_stat_statements was last reset; None without
    a claim (or without the extension)."""
    try:
        row = conn.execute(CLAIMS, (kind.claim,)).fetchone()
    except psycopg.errors.UndefinedTable:
        return None
    return None if row is None or row[0] is None else float(row[0])


def build_twin(conn: psycopg.Connection, kind: Kind) -> str:
    """A copy of the kind's index with deduplicate_items = off, built CONCURRENTLY (the fleet runs on);
    its name. The copy's columns and predicate are the server's own text of the index's."""
    index = sql.Identifier(*kind.index).as_string(conn)
    row = conn.execute(
        """SELECT array(SELECT pg_get_indexdef(i.indexrelid, k, true)
                        FROM generate_series(1, i.indnkeyatts) k ORDER BY k),
                  pg_get_expr(i.indpred, i.indrelid), i.indnatts = i.indnkeyatts
           FROM pg_index i WHERE i.indexrelid = %s::regclass""",
        (index,),
    ).fetchone()
    assert row is not None
    columns, predicate, no_include = row
    if not no_include:
        raise RuntimeError(f"{index} has INCLUDE columns: the twin would not be the same index")
    twin = f"{kind.index[1]}_nodedup"
    create = sql.SQL(
        "CREATE INDEX CONCURRENTLY {twin} ON {table} USING btree ({columns}) WITH (deduplicate_items = off)"
    ).format(
        twin=sql.Identifier(twin),
        table=sql.Identifier(*kind.table),
        columns=sql.SQL(", ").join(sql.SQL(c) for c in columns),
    )
    if predicate is not None:
        create += sql.SQL(" WHERE ") + sql.SQL(predicate)
    conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(kind.index[0], twin)))
    conn.execute(create)
    return twin


def make_only_valid(conn: psycopg.Connection, kind: Kind, chosen: str, other: str) -> None:
    """Plans read `chosen` alone: the other is left valid = false, still kept up to date by every write
    (indisready). Touching the table's pg_class row makes every cached plan on it planned again."""
    schema = sql.Identifier(kind.index[0]).as_string(conn)
    conn.execute(
        "UPDATE pg_index SET indisvalid = (indexrelid = %(chosen)s::regclass)"
        " WHERE indexrelid IN (%(chosen)s::regclass, %(other)s::regclass)",
        {"chosen": f"{schema}.{chosen}", "other": f"{schema}.{other}"},
    )
    table = sql.Identifier(*kind.table).as_string(conn)
    conn.execute("UPDATE pg_class SET relhasindex = relhasindex WHERE oid = %s::regclass", (table,))


def fleet_on(dsn: str, name: str, queues: list[str], lifetime_s: float, log: Path) -> Fleet:
    if name == "pg-boss":
        return PgBossFleet(dsn, queues, 200, lifetime_s, log)
    return SeedFleet(dsn, queues, 200, lifetime_s)


def warm(seconds: float, *monitors: Monitor) -> None:
    """Each monitor polls once a second for `seconds`, under the fleet: its caps settle (poll_cap) and
    its session prepares its plans before anything is measured."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for monitor in monitors:
            monitor.collect()
        time.sleep(1.0)


def turns_of(polls: int) -> list[str]:
    """on, off, off, on, on, off, ...: each index as often first as second.

    >>> turns_of(6)
    ['on', 'off', 'off', 'on', 'on', 'off']
    """
    return [(ON, OFF)[(i + 1) // 2 % 2] for i in range(polls)]


def interleaved(dsn: str, args: argparse.Namespace, queues: list[str], log: Path) -> dict[str, Turns]:
    kind = KINDS[args.kind]
    names = {ON: kind.index[1]}
    turns = {ON: Turns(), OFF: Turns()}
    with psycopg.connect(dsn, autocommit=True) as conn:
        fleet = fleet_on(dsn, args.kind, queues, 2 * args.polls + args.warm_s + 120, log)
        try:
            t = time.perf_counter()
            names[OFF] = build_twin(conn, kind)
            print(f"the twin {names[OFF]} (deduplicate_items = off) built in {time.perf_counter() - t:.1f} s")
            model = find_queues(dsn, kind=args.kind)[0].model
            counts = next(s for s in model.counts if s.name.split(".")[-1] == kind.counts)
            query = counts.compose()
            with Monitor(dsn, model, read_only=True) as monitor:
                warm(args.warm_s, monitor)  # both indexes kept up by the fleet; the poll's cap settles
                for mode in turns_of(2 * args.polls):
                    make_only_valid(conn, kind, names[mode], names[OFF if mode == ON else ON])
                    with contextlib.suppress(psycopg.errors.UndefinedFunction):  # the turn's claims alone
                        conn.execute("SELECT pg_stat_statements_reset()")
                    turn = turns[mode]
                    turn.walk_visits.append(walk_visits(conn, kind, queues[0], names[mode]))
                    params = {**DEFAULTS, "cap1": monitor.cap + 1}  # the poll's own cap, as it reads
                    ms, visits = counts_run(conn, query, params, names[mode])
                    turn.counts_ms.append(ms)
                    turn.counts_visits.append(visits)
                    t = time.perf_counter()
                    monitor.collect()
                    turn.walls.append((time.perf_counter() - t) * 1000)
                    time.sleep(max(0.0, 1.0 - turn.walls[-1] / 1000))
                    if (claims := claims_mean(conn, kind)) is not None:
                        turn.claims_ms.append(claims)
        finally:
            fleet.stop()
            with contextlib.suppress(KeyError):
                conn.execute(
                    sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(kind.index[0], names[OFF]))
                )
            conn.execute(
                "UPDATE pg_index SET indisvalid = true WHERE indexrelid = %s::regclass",
                (sql.Identifier(*kind.index).as_string(conn),),
            )
    return turns


def report(kind: str, index: str, turns: dict[str, Turns]) -> None:
    for mode, label in ((ON, "as built (deduplicate_items on)"), (OFF, "its twin, deduplicate_items off")):
        t = turns[mode]
        print(
            f"{kind}, {index} {label}: {len(t.walls)} polls; collect() median"
            f" {statistics.median(t.walls):.1f} ms, p95 {pct(t.walls, 0.95):.1f} ms; the poll's counts"
            f" statement median {statistics.median(t.counts_ms):.2f} ms,"
            f" {statistics.median(t.counts_visits):.0f} heap visits; one queue's walk to its first ready job:"
            f" heap visits median {statistics.median(t.walk_visits):.0f}, max {max(t.walk_visits)}"
            + (f"; the fleet's claim, mean {statistics.median(t.claims_ms):.2f} ms" if t.claims_ms else ""),
            flush=True,
        )
    on, off = turns[ON], turns[OFF]
    ratio = {
        "collect() median": (statistics.median(off.walls), statistics.median(on.walls)),
        "collect() p95": (pct(off.walls, 0.95), pct(on.walls, 0.95)),
        "the poll's counts statement, median ms": (
            statistics.median(off.counts_ms),
            statistics.median(on.counts_ms),
        ),
        "the poll's counts statement, heap visits": (
            float(statistics.median(off.counts_visits)),
            float(statistics.median(on.counts_visits)),
        ),
        "one queue's walk, heap visits": (
            float(statistics.median(off.walk_visits)),
            float(statistics.median(on.walk_visits)),
        ),
    }
    if on.claims_ms and off.claims_ms:
        ratio["the fleet's claim, mean ms (median of the turns)"] = (
            statistics.median(off.claims_ms),
            statistics.median(on.claims_ms),
        )
    for name, (a, b) in ratio.items():
        print(f"ratio off / on, {name}: {a:.1f} / {b:.1f} = {a / b if b else float('nan'):.2f}", flush=True)


def compare(dsn: str, args: argparse.Namespace, queues: list[str]) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        except psycopg.Error as exc:  # a server without it: no claim figures
            print(f"no pg_stat_statements ({str(exc).splitlines()[0]}): the fleet's claim is not timed")
    log = Path(args.log_dir) / "bench_posting_lists_fleet.log"
    turns = interleaved(dsn, args, queues, log)
    report(args.kind, sql.Identifier(*KINDS[args.kind].index).as_string(None), turns)


def fleet_table_parser(doc: str) -> argparse.ArgumentParser:
    """The options of a benchmark on one 10M-row stock table under its kind's fleet (this one's and
    bench_poll_sessions.py's)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--kind", choices=sorted(KINDS), default="pg-boss")
    ap.add_argument("--dsn", help="a server to build the table on (default: a private embedded one)")
    ap.add_argument(
        "--table-dsn", help="the kind's database built before (bench_fresh.py's): use it, build nothing"
    )
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--queues", type=int, default=50)
    ap.add_argument("--warm-s", type=float, default=20.0, help="the fleet's run before the measures count")
    ap.add_argument("--active", type=int, default=1000, help="the fill's running jobs kept running")
    ap.add_argument("--log-dir", default="/tmp", help="where the pg-boss fleet's log goes")
    return ap


def on_fleet_table(
    args: argparse.Namespace, body: Callable[[str, argparse.Namespace, list[str]], None]
) -> int:
    """`body(dsn, args, queues)` on the kind's table (built here unless --table-dsn), on a server with
    pg_stat_statements, the fill's running jobs but --active finished first."""
    print("load average (1, 5, 15 min) at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()), flush=True)
    queues = [f"q{i}" for i in range(args.queues)]
    os.environ["PGQ_TEST_QUEUES"] = ",".join(queues)  # pg-boss's install creates each queue

    def on(dsn: str) -> None:
        keep_active(dsn, args.kind, args.active)
        body(dsn, args, queues)

    on_table(
        args.dsn,
        args.table_dsn,
        args.kind,
        args.size,
        queues,
        on,
        {"shared_preload_libraries": "pg_stat_statements"},
    )
    return 0


def main() -> int:
    ap = fleet_table_parser(__doc__)
    ap.add_argument("--polls", type=int, default=120, help="polls of each index, in turn")
    return on_fleet_table(ap.parse_args(), compare)


if __name__ == "__main__":
    sys.exit(main())
