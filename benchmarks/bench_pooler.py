"""What the careful path for poolers costs a poll: direct vs through PgBouncer, prepared vs not.

    python benchmarks/bench_pooler.py [--polls 30] [--rows 10000] [--dsn DSN]

A queue of --rows jobs; a real PgBouncer (Debian's package, transaction pooling, pool of 2) in front
of the server; a counting proxy (delay_proxy.py, no delay) in front of each, for the round trips.
For each link it times `Monitor.collect()` (median of --polls after one warm-up poll on the same
connection, as the dashboard does) and a first poll on a new connection (connect, link check,
settings, the poll: what `snapshot` and `check` pay), median of 5:
- direct, auto: the link is judged direct: session settings once, statements prepared (the old path
  plus one link-check round trip at connect);
- direct, PGQ_TOP_POOLER=transaction: the careful path forced on a direct link (nothing prepared, the
  settings by set_config(..., true) at the head of each pipeline);
- PgBouncer, auto: judged pooled, the careful path.
Run with PYTHONPATH at an older checkout to time its code on the direct link (it has no pooled path).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from common import measured_server
from delay_proxy import DelayProxy
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from pgq_tui.detection import single_queue
from pgq_tui.monitor import open_monitor
from pgq_tui.queue import JobQueue

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.pgbouncer_support import pgbouncer


def median_ms(fn: Callable[[], object], n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def measure(label: str, dsn: str, proxy: DelayProxy, polls: int) -> None:
    model = single_queue(dsn).model
    with open_monitor(dsn, model) as monitor:
        monitor.collect()
        before = proxy.round_trips
        poll = median_ms(monitor.collect, polls)
        trips = (proxy.round_trips - before) / polls
        snap = monitor.collect()
        assert not snap.errors, snap.errors

    def first_poll() -> None:
        with open_monitor(dsn, model) as fresh:
            fresh.collect()

    first = median_ms(first_poll, 5)
    print(f"{label:<34} {poll:8.1f} ms {trips:8.1f} {first:12.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--polls", type=int, default=30)
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--dsn", default=None)
    args = ap.parse_args()
    try:
        import pgq_tui.db.link  # noqa: F401
    except ImportError:
        careful = False  # an older checkout: no pooled path
    else:
        careful = True
    with measured_server(args.dsn) as (dsn, version):
        with JobQueue(dsn) as q:
            q.install()
            q.enqueue("emails", [{"n": i} for i in range(args.rows)])
            q.enqueue("reports", [{"n": i} for i in range(20)], max_attempts=1)
            for job in q.claim("reports", limit=10, lease=0.01):
                q.fail(job, "boom")
            q.claim("emails", limit=20, lease=0.01)
        load = os.getloadavg()[0]
        print(f"PostgreSQL {version}, {args.rows} rows; load {load:.1f}; medians of {args.polls} polls")
        print(f"{'link':<34} {'poll':>11} {'trips':>8} {'first poll':>15}")
        direct_proxy = DelayProxy({k: str(v) for k, v in conninfo_to_dict(dsn).items()})
        direct = make_conninfo(dsn, host="127.0.0.1", port=str(direct_proxy.port))
        os.environ["PGQ_TOP_POOLER"] = "auto"
        label = "direct" + (", auto (prepared)" if careful else " (this checkout)")
        measure(label, direct, direct_proxy, args.polls)
        if not careful:
            return
        os.environ["PGQ_TOP_POOLER"] = "transaction"
        measure("direct, PGQ_TOP_POOLER=transaction", direct, direct_proxy, args.polls)
        os.environ["PGQ_TOP_POOLER"] = "auto"
        with pgbouncer(dsn, "transaction") as port:
            pgb_proxy = DelayProxy({"host": "127.0.0.1", "port": str(port)})
            via = make_conninfo(dsn, host="127.0.0.1", port=str(pgb_proxy.port))
            measure("PgBouncer 1.18 transaction, auto", via, pgb_proxy, args.polls)


if __name__ == "__main__":
    main()
