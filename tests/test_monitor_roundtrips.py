"""A poll costs few round trips however many panels it reads (psycopg pipeline mode), counted by a
proxy between the monitor and the server; a failing panel still fails alone; no transaction is left
open after a poll."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from monitor_support import pgq_monitor
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.pq import TransactionStatus

from pgq_tui.queue import JobQueue

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from delay_proxy import DelayProxy


@pytest.fixture
def proxied(dsn: str) -> Iterator[tuple[str, DelayProxy]]:
    with JobQueue(dsn) as q:
        q.enqueue("emails", [{}] * 5)
        q.claim("emails", limit=2, lease=0.01)
    proxy = DelayProxy({k: str(v) for k, v in conninfo_to_dict(dsn).items()})
    yield make_conninfo(dsn, host="127.0.0.1", port=str(proxy.port)), proxy


def test_a_poll_is_one_round_trip(proxied: tuple[str, DelayProxy]) -> None:
    via, proxy = proxied
    with pgq_monitor(via) as monitor:
        monitor.collect()  # connects and prepares; its statements wait for the server row (2 trips)
        poll = monitor._connection()  # the poll's own session: the background readers have theirs
        trips = []
        for _ in range(5):
            before = proxy.trips_of(poll)
            snap = monitor.collect()
            trips.append(proxy.trips_of(poll) - before)
            assert snap.errors == {} and sum(q.ready + q.stuck for q in snap.queues) == 5
            assert monitor._connection().info.transaction_status == TransactionStatus.IDLE
        # the server row, the check and every panel, planned on the last poll's clock and table; a
        # window's second guessed wrong (the poll within a few ms of a second's end) costs one more
        assert max(trips) <= 2 and trips.count(1) >= len(trips) - 1, trips


def test_a_wrong_guess_costs_a_round_trip_never_a_figure(proxied: tuple[str, DelayProxy]) -> None:
    """A poll planned on a clock 30 s off and a table that moved sends what it guessed wrong again
    (the counters' window, the table's panels) in a second round trip, and reads it right."""
    via, proxy = proxied
    with pgq_monitor(via) as monitor:
        monitor.collect()
        right = monitor.collect()
        poll = monitor._connection()
        ahead = monitor._ahead
        assert ahead is not None
        monitor._ahead = dataclasses.replace(ahead, origin=ahead.origin - timedelta(seconds=30), oid=0)
        before = proxy.trips_of(poll)
        wrong = monitor.collect()
        assert proxy.trips_of(poll) - before == 2 and wrong.errors == {}
        assert [(q.queue, q.ready, q.stuck) for q in wrong.queues] == [
            (q.queue, q.ready, q.stuck) for q in right.queues
        ]
        assert wrong.table.table == right.table.table and wrong.table.live_tuples == right.table.live_tuples
        assert wrong.throughput.per_queue.keys() == right.throughput.per_queue.keys()


def test_a_failing_statement_fails_only_its_panel(proxied: tuple[str, DelayProxy], dsn: str) -> None:
    via, proxy = proxied
    with pgq_monitor(via, lock_timeout_ms=100) as monitor, psycopg.connect(dsn) as locker:
        monitor.collect()
        locker.execute("LOCK TABLE jobs_stats IN ACCESS EXCLUSIVE MODE")  # only the counters' panel
        snap = monitor.collect()
        assert set(snap.errors) == {"throughput"} and "lock timeout" in snap.errors["throughput"]
        assert sum(q.ready + q.stuck for q in snap.queues) == 5 and snap.sessions.total_backends >= 2
        locker.rollback()
        poll = monitor._connection()
        before = proxy.trips_of(poll)
        assert monitor.collect().errors == {} and proxy.trips_of(poll) - before <= 3
