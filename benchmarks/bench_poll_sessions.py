"""What the poll would gain from a second session: its statements on one connection, as collect() sends
them (one pipeline), against the same statements split over two connections at once (the counts on one,
the rest on the other), on a 10M-row stock table under the kind's own fleet (#35).

    python benchmarks/bench_poll_sessions.py [--kind pg-boss|seed-jobs] [--dsn DSN] [--table-dsn DSN]
                                             [--size 10000000] [--queues 50] [--rounds 40]
                                             [--warm-s 20] [--active 1000]

The statements are a warmed Monitor's own plan for a poll (its caps settled, monitor/collect.py's
_plan), sent by its own pipeline code (monitor/pipeline.py) on two monitors' sessions (their
session settings). Each round times both ways, a second apart, the order alternating: the one
pipeline, and the two at once (a thread each), until both have answered. Prints the median and p95
of each and the ratios. This is the statements' server time and round trips only: collect()'s Python
(4-6 ms a poll at 50 queues) comes on top either way.

pgq-top's poll uses one session (a second one for the background counter): a second poll session
would double what every monitor holds, which a pooler's or a managed server's connection limit
feels. This measures what that would buy.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from bench_fresh import pct
from bench_posting_lists import fleet_on, fleet_table_parser, on_fleet_table, warm

from pgq_tui.detection import find_queues
from pgq_tui.monitor import pipeline
from pgq_tui.monitor.collect import Monitor

ONE, TWO = "one session", "two sessions"


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def measure(dsn: str, args: argparse.Namespace, queues: list[str]) -> None:
    log = Path(args.log_dir) / "bench_poll_sessions_fleet.log"
    fleet = fleet_on(dsn, args.kind, queues, 2 * args.rounds + args.warm_s + 120, log)
    times: dict[str, list[float]] = {ONE: [], TWO: []}
    try:
        model = find_queues(dsn, kind=args.kind)[0].model
        with Monitor(dsn, model, read_only=True) as first, Monitor(dsn, model, read_only=True) as second:
            warm(args.warm_s, first, second)
            snap = first.collect()
            oid = first._connection().execute("SELECT %s::regclass::oid", (first.qualified,)).fetchone()
            assert oid is not None
            plan = first._plan(snap.server.now, oid[0])  # the statements collect() sends, as it sends them
            counts = {s.name for s in model.counts}
            heavy = [p for p in plan if p[0][1] in counts]
            light = [p for p in plan if p[0][1] not in counts]
            print(
                f"{args.kind}: the poll's {len(plan)} statements; on the second session its"
                f" {len(heavy)} count statements: {', '.join(sorted(p[0][1] for p in heavy))}",
                flush=True,
            )

            def one() -> None:
                pipeline.run(first._connection(), plan)

            def two() -> None:
                other = threading.Thread(target=pipeline.run, args=(second._connection(), heavy))
                other.start()
                pipeline.run(first._connection(), light)
                other.join()

            ways = {ONE: one, TWO: two}
            for i in range(args.rounds):
                for name in (ONE, TWO) if i % 2 == 0 else (TWO, ONE):
                    times[name].append(timed(ways[name]))
                    time.sleep(1.0)
    finally:
        fleet.stop()
    for name, v in times.items():
        print(
            f"{name}: median {statistics.median(v):.1f} ms, p95 {pct(v, 0.95):.1f} ms over {len(v)} rounds",
            flush=True,
        )
    for label, figure in (("median", statistics.median), ("p95", lambda v: pct(v, 0.95))):
        a, b = figure(times[TWO]), figure(times[ONE])
        print(f"ratio two / one session, {label}: {a:.1f} / {b:.1f} = {a / b:.2f}", flush=True)


def main() -> int:
    ap = fleet_table_parser(__doc__)
    ap.add_argument("--rounds", type=int, default=40, help="rounds of each way, in turn")
    return on_fleet_table(ap.parse_args(), measure)


if __name__ == "__main__":
    sys.exit(main())
