"""The poll on stock schemas (no advised index): foreground cost against size, and the background scans.

    python benchmarks/bench_stock_poll.py [--dsn DSN] [--sizes 10000,5000000] [--runs 15]
                                          [--only seed-jobs,graphile-worker,pg-boss] [--watch-s 30]

Per kind and size, a fresh database: Graphile Worker and pg-boss installed by their own tools (the
clients of tests/frameworks: `npm ci` in tests/frameworks/node first) and filled as
benchmarks/bench_framework_poll.py fills them (tests/frameworks/fills.py); the seed article's `jobs`
table exactly as the article writes it (its one partial index on pending rows) filled by SQL in the
same proportions. No advised index is created: what no index serves is a scan (monitor/tiers.py), in
the poll below SCAN_PAGES, in the background counter above it.

Timed, medians of --runs, sizes in turns: the whole Monitor.collect() (the foreground poll the user
waits for) with its background counter running beside it, as in the dashboard; then each indexed
queue statement of the poll alone (ms; its count cap, its generic plan; no background count
competing), to show where a poll's time grows. Then for --watch-s a
monitor polls once a second and reports the background work: each background statement's last cost
(each scan is run and paced on its own) and their sum (one full pass), the counter's measured duty
(its busy time over the watch) and the figures' lag (poll time - as_of, median and max). Prints the
5M / 10k poll ratio (target < 2) and the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psycopg
from bench_framework_poll import QUEUES, build, drop, interleaved_median_ms, statement_runs
from common import measured_server
from psycopg import sql
from psycopg.conninfo import make_conninfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from dialect_cases.seed import SEED_JOBS

from pgq_tui.detection import find_queues
from pgq_tui.monitor import tiers
from pgq_tui.monitor.collect import Monitor

# the seed's rows, in bench_framework_poll's proportions: 90% done (kept), 6% ready, 2% scheduled,
# 1% running (a fifth of them stuck; the others hold leases lease_s long), 1% pending far
# ahead (the seed has no dead state). Ready rows' run_at a microsecond apart, as enqueues over time are:
# the seed's claim (ORDER BY run_at, id) then walks its index instead of sorting a queue's tie group.
SEED_FILL = """
INSERT INTO jobs (queue, payload, status, run_at, attempts, locked_until)
SELECT (%(queues)s::text[])[1 + mod(abs(hashint4(g::int)), cardinality(%(queues)s::text[]))], '{}',
       CASE WHEN b < 90 THEN 'done' WHEN b = 98 THEN 'running' ELSE 'pending' END,
       CASE WHEN b IN (96, 97, 99) THEN now() + interval '1 hour'
            ELSE now() - interval '1 minute' - g * interval '1 microsecond' END,
       CASE WHEN b < 90 OR b = 98 THEN 1 ELSE 0 END,
       CASE WHEN b = 98 AND mod(g / 100, 5) = 0 THEN now() - interval '5 minutes'
            WHEN b = 98 THEN now() + make_interval(secs => %(lease_s)s) END
FROM generate_series(1, %(n)s) g, LATERAL (SELECT mod(g, 100) AS b) x
"""


def build_seed(server_dsn: str, n: int, queues: Sequence[str] = QUEUES, lease_s: float = 600) -> str:
    """A fresh database with the seed's `jobs` table (its one index) and n rows over `queues`; the
    running jobs' valid leases last `lease_s` from the fill."""
    name = f"bench_seed_{n}_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = make_conninfo(server_dsn, dbname=name)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(SEED_JOBS)
        conn.execute(SEED_FILL, {"n": n, "queues": list(queues), "lease_s": lease_s})
        conn.execute("VACUUM ANALYZE")
        conn.execute("CHECKPOINT")
    return dsn


def watch(monitor: Monitor, seconds: float) -> dict[str, Any]:
    """Poll once a second for `seconds`: the background statements' last costs (each scan runs and is
    paced on its own), the counter's measured duty (its busy time over the watch) and the figures'
    lag (poll time - the background figures' as_of)."""
    lags: list[float] = []
    counter = monitor._counter
    monitor.collect()
    busy0, t0 = counter.busy_s, time.monotonic()
    end = t0 + seconds
    while time.monotonic() < end:
        snap = monitor.collect()
        bg = counter.latest()
        if bg is not None:
            lags.append((snap.server.now - bg.as_of).total_seconds())
        time.sleep(1.0)
    elapsed = time.monotonic() - t0
    with counter._cond:
        costs = {k: p.cost_s for k, p in counter._parts.items() if p.landed is not None}
    return {
        "statements": {k.split(".")[-1]: round(c, 2) for k, c in costs.items()},  # last cost, s
        "pass_s": sum(costs.values()),  # every background statement once: one full pass
        "duty": (counter.busy_s - busy0) / elapsed,  # measured: busy seconds over the watch
        "lag_med_s": statistics.median(lags) if lags else None,
        "lag_max_s": max(lags) if lags else None,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn")
    ap.add_argument("--sizes", default="10000,5000000")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--only", default="seed-jobs,graphile-worker,pg-boss")
    ap.add_argument("--watch-s", type=float, default=30.0)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    small, large = min(sizes), max(sizes)
    os.environ["PGQ_TEST_QUEUES"] = ",".join(QUEUES)  # pg-boss: one partition each
    worst = 0.0
    print("load average (1, 5, 15 min) at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    with measured_server(args.dsn) as (server_dsn, version):
        print(f"PostgreSQL {version}; stock schemas, no advised index; SCAN_PAGES {tiers.SCAN_PAGES}")
        for kind in args.only.split(","):
            t0 = time.monotonic()
            builder: Callable[[int], str] = (
                (lambda n: build_seed(server_dsn, n))
                if kind == "seed-jobs"
                else (lambda n, k=kind: build(server_dsn, k, n, advised=False))
            )
            dsns = {n: builder(n) for n in sizes}
            print(f"{kind}: built {', '.join(f'{n:,}' for n in sizes)} rows in {time.monotonic() - t0:.0f} s")
            try:
                with ExitStack() as stack:
                    polls: dict[int, Callable[[], object]] = {}
                    tier: dict[int, str] = {}
                    cap: dict[int, int] = {}
                    for n, dsn in dsns.items():
                        target = find_queues(dsn, kind=kind)[0]
                        monitor = stack.enter_context(Monitor(dsn, target.model, read_only=True))
                        snap = monitor.collect()
                        assert not snap.errors, snap.errors
                        tier[n] = monitor.tier.tier
                        polls[n] = monitor.collect
                    poll = interleaved_median_ms(polls, args.runs)
                # each indexed queue statement alone, as the poll runs it (its cap, its generic plan),
                # on monitors that never collect(), so no background count competes
                with ExitStack() as stack:
                    each: dict[tuple[int, str], Callable[[], object]] = {}
                    for n, dsn in dsns.items():
                        target = find_queues(dsn, kind=kind)[0]
                        monitor = stack.enter_context(Monitor(dsn, target.model, read_only=True))
                        cap[n] = monitor.count_cap
                        each.update({(n, name): fn for name, fn in statement_runs(monitor).items()})
                    timed = interleaved_median_ms(each, args.runs)
                target = find_queues(dsns[large], kind=kind)[0]
                with Monitor(dsns[large], target.model, read_only=True) as monitor:
                    seen = watch(monitor, args.watch_s)
            finally:
                for dsn in dsns.values():
                    drop(server_dsn, dsn)
            for n in sizes:
                print(f"{kind:>16} {n:>10,} rows: whole collect() {poll[n]:6.1f} ms  (scans: {tier[n]})")
                print(
                    " " * 17
                    + f"count cap {cap[n]:,}: "
                    + "  ".join(f"{name} {ms:.2f}" for (size, name), ms in timed.items() if size == n)
                )
            ratio = poll[large] / poll[small]
            worst = max(worst, ratio)
            print(f"{kind:>16} at {large:,} rows / at {small:,}: whole collect() {ratio:.2f} (target < 2)")
            fmt = {k: (f"{v:.3g}" if isinstance(v, float) else v) for k, v in seen.items()}
            print(f"{kind:>16} background at {large:,} rows over {args.watch_s:g} s: {fmt}")
    print("load average (1, 5, 15 min) at end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return 0 if worst < 2 else 1


if __name__ == "__main__":
    sys.exit(main())
