"""Is the poll's slow tail on a big pg-boss table the background counter competing for the cores?

    python benchmarks/bench_poll_overlap.py [--polls 240] [--size 10000000] [--queues 50]

pg-boss 12.38's stock table (bench_fresh.py's fill, 1,000 running jobs kept) under its own client's
fleet (200 jobs a second), on a private embedded server. A Monitor polls once a second as the dashboard
does, its background counter beside it; during each collect() a thread samples every 0.5 ms whether a
background statement is in flight. Printed: collect() median and p95 of all polls, of those with no
background statement in flight and of those with one, and the slowest 5% with what was in flight.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

from bench_framework_poll import drop
from bench_fresh import PgBossFleet, built_pgboss
from common import measured_server

from pgq_tui.detection import find_queues
from pgq_tui.monitor.background import ERRAND
from pgq_tui.monitor.collect import Monitor


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def watched_polls(dsn: str, polls: int) -> list[tuple[float, list[str]]]:
    """(collect() ms, the background statements seen in flight during it) per poll."""
    target = find_queues(dsn, kind="pg-boss")[0]
    out: list[tuple[float, list[str]]] = []
    with Monitor(dsn, target.model, read_only=True) as m:
        for _ in range(5):
            m.collect()
            time.sleep(1)
        for _ in range(polls):
            seen: set[str] = set()
            stop = threading.Event()

            def sample(seen: set[str] = seen, stop: threading.Event = stop) -> None:
                while not stop.is_set():
                    running = m._counter._running  # the part in flight, read without its lock: a sample
                    if running is not None and running != ERRAND:  # not the poll's own lent counts
                        seen.add(running)
                    time.sleep(0.0005)

            sampler = threading.Thread(target=sample)
            sampler.start()
            t = time.perf_counter()
            m.collect()
            ms = (time.perf_counter() - t) * 1000
            stop.set()
            sampler.join()
            out.append((ms, sorted(seen)))
            time.sleep(max(0.0, 1 - ms / 1000))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--polls", type=int, default=240)
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--queues", type=int, default=50)
    args = ap.parse_args()
    queues = [f"q{i}" for i in range(args.queues)]
    os.environ["PGQ_TEST_QUEUES"] = ",".join(queues)
    with measured_server(None, None) as (server, version):
        dsn = built_pgboss(server, args.size, queues, version)
        fleet = PgBossFleet(dsn, queues, 200.0, args.polls + 300, Path("/tmp/overlap-fleet.log"))
        try:
            time.sleep(20)  # the fleet's first claims
            rows = watched_polls(dsn, args.polls)
        finally:
            fleet.stop()
            drop(server, dsn)
    every = [ms for ms, _ in rows]
    alone = [ms for ms, seen in rows if not seen]
    during = [ms for ms, seen in rows if seen]
    print(f"all {len(every)} polls: median {statistics.median(every):.1f} ms, p95 {pct(every, 0.95):.1f} ms")
    for label, values in (("no background statement in flight", alone), ("one in flight", during)):
        if values:
            print(
                f"{label}: {len(values)} polls, median {statistics.median(values):.1f} ms,"
                f" p95 {pct(values, 0.95):.1f} ms"
            )
    slowest = sorted(rows, reverse=True)[: max(1, len(rows) // 20)]
    print("slowest 5% (ms, in flight):", [(round(ms, 1), seen) for ms, seen in slowest])
    print("load average (1, 5, 15 min) at the end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
