"""Round trips per poll, and what they cost through a link with latency (an SSH tunnel, a bastion).

    python benchmarks/bench_roundtrips.py [--rtts 0,20,50,100] [--polls 15] [--dsn DSN]

A TCP proxy on loopback forwards to the server (its Unix socket, or host:port) and holds every chunk
for half the round-trip time in each direction. It counts round trips the way a link feels them: a
client->server chunk after the server last spoke starts a new one. For each RTT it times
`Monitor.collect()` (median of --polls, after a warm-up poll on the same connection, as the dashboard
does) and prints the round trips per poll; the reference is one `SELECT 1` through the same proxy.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import psycopg
from common import measured_server
from delay_proxy import DelayProxy
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from pgq_tui.detection import single_queue
from pgq_tui.monitor import open_monitor
from pgq_tui.queue import JobQueue


def timed(fn: Callable[[], object], polls: int, proxy: DelayProxy) -> tuple[float, float]:
    """Median ms of `fn` and round trips per call, after one warm-up call."""
    fn()
    times, trips = [], []
    for _ in range(polls):
        before = proxy.round_trips
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
        trips.append(proxy.round_trips - before)
    return statistics.median(times), statistics.median(trips)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rtts", default="0,20,50,100", help="round-trip times in ms")
    ap.add_argument("--polls", type=int, default=15)
    ap.add_argument("--dsn", default=None)
    args = ap.parse_args()
    with measured_server(args.dsn) as (dsn, version):
        with JobQueue(dsn) as q:  # a queue with something in every panel
            q.install()
            q.enqueue("emails", [{"n": i} for i in range(200)])
            q.enqueue("reports", [{"n": i} for i in range(20)], max_attempts=1)
            for job in q.claim("reports", limit=10, lease=0.01):
                q.fail(job, "boom")
            q.claim("emails", limit=20, lease=0.01)
        proxy = DelayProxy({k: str(v) for k, v in conninfo_to_dict(dsn).items()})
        via = make_conninfo(dsn, host="127.0.0.1", port=str(proxy.port))
        print(f"PostgreSQL {version}; median of {args.polls} polls through a delaying TCP proxy")
        print("   RTT   collect()    round trips   SELECT 1 (reference)   collect/SELECT 1")
        for rtt in (float(r) for r in args.rtts.split(",")):
            proxy.one_way_s = rtt / 2000
            model = single_queue(via, kind="pgq").model
            with open_monitor(via, model) as monitor, psycopg.connect(via, autocommit=True) as conn:
                poll_ms, poll_trips = timed(monitor.collect, args.polls, proxy)
                ref_ms, _ = timed(lambda: conn.execute("SELECT 1").fetchall(), args.polls, proxy)
            print(
                f"{rtt:4.0f}ms  {poll_ms:8.1f} ms   {poll_trips:6.0f}       {ref_ms:8.1f} ms"
                f"            {poll_ms / ref_ms:6.1f}"
            )


if __name__ == "__main__":
    main()
