"""The poll lends its count statements to the background counter's idle session (monitor/errand.py),
on a real server: they run there under the poll's settings, at once with the rest of the poll, and
whatever does not come back (a cut link, a statement past its timeout) costs the poll nothing.

A queue past the cap keeps the counter's thread and session alive; a small one beside it is counted
exactly by the lent statement.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Hashable, Iterator

import psycopg
import pytest
from monitor_support import pgq_monitor
from test_engine_errors import count_statement, garbled, pgq_model

from pgq_tui.monitor.collect import Monitor
from pgq_tui.monitor.pipeline import QueryResult
from pgq_tui.monitor.snapshot import EXACT, Snapshot

DEEP_AND_SMALL = """
INSERT INTO jobs (queue, status, run_at)
SELECT q.name, 'pending', now() - interval '1 minute'
FROM (VALUES ('deep', 60), ('small', 3)) AS q(name, n)
CROSS JOIN LATERAL generate_series(1, q.n)
"""
SETTINGS = """SELECT pg_backend_pid() AS pid, current_setting('statement_timeout') AS statement_timeout,
       current_setting('enable_bitmapscan') AS bitmapscan, current_setting('plan_cache_mode') AS plans,
       current_setting('application_name') AS name"""


@pytest.fixture
def monitor(dsn: str) -> Iterator[Monitor]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(DEEP_AND_SMALL)
    # 'deep' is past the cap: the counter counts it, its session stays open between its statements
    with pgq_monitor(dsn, count_cap=20, statement_timeout_ms=4000, count_interval_s=0.5) as m:
        m.collect()
        yield m


@pytest.fixture
def plain(dsn: str) -> Iterator[psycopg.Connection]:
    """A lender with no settings of its own: statements it lends run under the counter's settings."""
    with psycopg.connect(dsn, application_name="a plain lender") as conn:
        yield conn


def lent(
    m: Monitor, statements: list[tuple[str, str, None]], lender: psycopg.Connection
) -> dict[Hashable, QueryResult]:
    """Hold the counter's session as a poll does (as soon as it is free: its own statements take ms
    here), lend it `statements`, and release it: their answer."""
    deadline = time.monotonic() + 20
    while m._counter.hold() is None:
        assert time.monotonic() < deadline, "the counter's session was never free"
        time.sleep(0.01)
    try:
        errand = m._counter.lend(statements, lender, 5.0)
        assert errand is not None  # held: its session runs nothing else
        return errand.answer(5.0)
    finally:
        m._counter.release()


def small(snap: Snapshot) -> tuple[int | None, str]:
    q = next(q for q in snap.queues if q.queue == "small")
    return q.ready, q.figures["ready"].accuracy


def test_lent_statements_run_on_the_counters_session_as_the_polls(
    monitor: Monitor, plain: psycopg.Connection
) -> None:
    poll = monitor._connection()
    (row,) = lent(monitor, [("probe", SETTINGS, None)], poll)["probe"]  # type: ignore[misc]
    assert row["pid"] == monitor._counter._session.pid != poll.info.backend_pid
    as_poll = (row["statement_timeout"], row["bitmapscan"], row["plans"], row["name"])
    assert as_poll == ("4s", "off", "force_generic_plan", "pgq-top")
    # SET LOCAL: after it, that session's settings are the counter's own again
    (own,) = lent(monitor, [("probe", SETTINGS, None)], plain)["probe"]  # type: ignore[misc]
    assert (own["pid"], own["statement_timeout"], own["bitmapscan"]) == (row["pid"], "20s", "on")
    assert own["name"] == "a plain lender"
    (name,) = plain.execute("SELECT application_name FROM pg_stat_activity WHERE pid = %s", [row["pid"]])
    assert name == ("pgq-top counts",)


def test_a_poll_lends_its_counts_and_reads_them_exactly(monitor: Monitor) -> None:
    before = monitor._counter.lent
    deadline = time.monotonic() + 20
    while monitor._counter.lent == before:  # a poll whose counts went to the counter's session
        assert time.monotonic() < deadline, "no poll lent its counts"
        snap = monitor.collect()
        assert not snap.errors
        assert small(snap) == (3, EXACT)
        time.sleep(0.05)


def terminate_counter(m: Monitor, dsn: str, plain: psycopg.Connection) -> None:
    lent(m, [("probe", "SELECT 1 AS one", None)], plain)  # its session is open
    with psycopg.connect(dsn, autocommit=True) as admin:
        killed = admin.execute("SELECT pg_terminate_backend(%s)", [m._counter._session.pid]).fetchone()
    assert killed == (True,)


def test_a_cut_counter_link_costs_the_poll_nothing(
    monitor: Monitor, dsn: str, plain: psycopg.Connection
) -> None:
    terminate_counter(monitor, dsn, plain)
    # held at once, before its own next statement can find the cut: the lent one finds it
    assert monitor._counter.hold() is not None
    try:
        errand = monitor._counter.lend([("probe", "SELECT 1 AS one", None)], plain, 5.0)
        assert errand is not None and errand.answer(5.0) == {}  # the lender sends it again on its own
        assert not monitor._counter._session.usable  # dropped: reopened at its next statement
    finally:
        monitor._counter.release()
    terminate_counter(monitor, dsn, plain)
    snap = monitor.collect()  # its counts, lent to the cut session or not, are read all the same
    assert not snap.errors and small(snap) == (3, EXACT)


def test_the_poll_does_not_list_the_session_running_its_counts(dsn: str) -> None:
    """While the counter's session runs the poll's counts it holds an xmin, as the poll's own does:
    it is the poll, left out of the xmin holders as the poll's own session is. Its own statements
    are listed as before (test_background_xmin.py)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(DEEP_AND_SMALL)
    model = pgq_model(dsn)
    ready = count_statement(model, "ready")
    slow = garbled(ready, "ready", "(SELECT g.ready FROM pg_sleep(0.3))")  # beside the poll's own
    counts = tuple(slow if s == ready else s for s in model.counts)
    with Monitor(dsn, dataclasses.replace(model, counts=counts), count_cap=20, count_interval_s=0.5) as m:
        deadline, seen = time.monotonic() + 30, 0
        while seen < 2:
            assert time.monotonic() < deadline, "no poll lent its counts"
            before = m._counter.lent
            snap = m.collect()
            if m._counter.lent > before:  # this poll's counts ran on the counter's session, slowly
                seen += 1
                holders = {h.name for h in snap.sessions.xmin_holders}
                assert str(m._counter._session.pid) not in holders, snap.sessions.xmin_holders
                assert small(snap) == (3, EXACT)


def test_a_lent_statement_past_its_timeout_fails_alone(
    monitor: Monitor, dsn: str, plain: psycopg.Connection
) -> None:
    with Monitor(dsn, monitor.model, statement_timeout_ms=100) as strict:
        statements = [("slow", "SELECT pg_sleep(2)", None), ("after", "SELECT 2 AS two", None)]
        got = lent(monitor, statements, strict._connection())
    assert isinstance(got["slow"], psycopg.errors.QueryCanceled)
    assert got["after"] == [{"two": 2}]  # sent again after the failed one, as on the poll's own session
    again = lent(monitor, [("probe", "SELECT 1 AS one", None)], plain)
    assert again == {"probe": [{"one": 1}]}  # the counter's session is unharmed


def test_nothing_is_lent_while_the_counter_has_no_session(dsn: str, plain: psycopg.Connection) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO jobs (queue, status) VALUES ('small', 'pending')")
    with pgq_monitor(dsn) as m:
        snap = m.collect()  # nothing past the cap: no counter thread, no session to lend
        assert m._counter.hold() is None  # nothing to hold
        assert m._counter.lend([("probe", "SELECT 1", None)], plain, 5.0) is None
        assert small(snap) == (1, EXACT) and m._counter.lent == 0
