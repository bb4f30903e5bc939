"""The HTTP side: a prometheus_client Collector that yields one scrape's families from the cache,
served by prometheus_client's own threaded HTTP server on a registry of its own."""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Iterator
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from pgq_tui.errors import EXIT_OK, EXIT_USAGE, PgqError
from pgq_tui.exporter.cache import SnapshotCache
from pgq_tui.exporter.metrics import families
from pgq_tui.exporter.tls import Tls, from_args, serve_tls

DEFAULT_LISTEN = "127.0.0.1:9187"


class SnapshotCollector(Collector):
    def __init__(self, cache: SnapshotCache) -> None:
        self.cache = cache

    def collect(self) -> Iterator[Metric]:
        yield from families(self.cache.get())

    def describe(self) -> list[Metric]:
        # Registering must not collect (it would hit the database at start-up, maybe before it is up).
        return []


def parse_listen(text: str) -> tuple[str, int]:
    """HOST:PORT, [IPv6]:PORT or :PORT (all interfaces); port 0 picks a free one.

    >>> parse_listen("127.0.0.1:9187"), parse_listen("[::1]:9000"), parse_listen(":9187")
    (('127.0.0.1', 9187), ('::1', 9000), ('0.0.0.0', 9187))
    """
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise PgqError(f"--listen wants HOST:PORT, got {text!r}", EXIT_USAGE)
    return host.strip("[]") or "0.0.0.0", int(port)


def serve(cache: SnapshotCache, listen: str, tls: Tls | None = None) -> tuple[WSGIServer, threading.Thread]:
    """Start serving in a background thread; returns (server, thread). `server.shutdown()` stops it.
    With `tls`, over HTTPS (pgq_tui/exporter/tls.py)."""
    host, port = parse_listen(listen)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SnapshotCollector(cache))
    try:
        if tls is not None:
            return serve_tls(host, port, registry, tls)
        return start_http_server(port, host, registry)
    except OSError as exc:
        raise PgqError(f"cannot listen on {listen}: {exc.strerror or exc}", EXIT_USAGE) from None


def run_exporter(args: argparse.Namespace) -> int:
    import signal

    from pgq_tui.fleet.poll import TargetWatch

    (target,) = args.target_list
    tls = from_args(args)  # a wrong TLS flag: one line before anything connects
    watch = TargetWatch(target)
    cache = SnapshotCache(watch, min_interval_s=args.min_interval)
    cache.get()  # detect now, so the line below can say which queues (a database down: pgq_up 0)
    server, thread = serve(cache, args.listen, tls)
    host, port = server.server_address[:2]
    found = ", ".join(f"{q.kind} {q.relation}" for q in watch.queues)
    print(
        f"pgq-top exporter: serving {found or 'no queue yet (' + str(cache.get().error) + ')'} on "
        f"{target.name} at {'https' if tls else 'http'}://{host!s}:{port}/metrics (one collect per "
        f"{args.min_interval:g} s at most); Ctrl-C stops",
        file=sys.stderr,
        flush=True,
    )
    stopping = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopping.set())
    try:
        while not stopping.wait(1.0):
            pass
    finally:
        server.shutdown()
        thread.join(5)
        watch.close()
    return EXIT_OK
