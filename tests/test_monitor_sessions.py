"""Sessions panel: idle-in-transaction sessions, xmin holders and lock blockers created on purpose in
background connections show up with the right pids; pgq-top's own sessions are labelled."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import psycopg
import pytest
from monitor_support import collect, pgq_monitor

from pgq_tui.queue import JobQueue


@pytest.fixture
def background(dsn: str) -> Iterator[list[psycopg.Connection]]:
    """Open connections with `open_bg(...)`; all are closed (rolled back) at the end."""
    conns: list[psycopg.Connection] = []
    yield conns
    for conn in conns:
        conn.close()


def open_bg(dsn: str, conns: list[psycopg.Connection], app: str, **kw: object) -> psycopg.Connection:
    conn = psycopg.connect(dsn, application_name=app, **kw)  # type: ignore[arg-type]
    conns.append(conn)
    return conn


def test_idle_in_transaction_and_xmin_holders(dsn: str, background: list[psycopg.Connection]) -> None:
    writer = open_bg(dsn, background, "bg-writer")  # holds an xid, no snapshot between statements
    writer.execute("SELECT txid_current()")
    reader = open_bg(dsn, background, "bg-reader")  # repeatable read: holds a snapshot (backend_xmin)
    reader.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    reader.execute("SELECT 1")
    time.sleep(0.3)
    snap = collect(dsn)
    idle = {s.pid: s for s in snap.sessions.idle_in_transaction}
    w = idle[writer.info.backend_pid]
    assert (w.application, w.state, w.query) == ("bg-writer", "idle in transaction", "SELECT txid_current()")
    assert w.xact_age_s is not None and w.xact_age_s >= 0.3 and w.state_age_s is not None
    assert w.client in ("local", "127.0.0.1", "::1") and not w.is_pgq_top and w.user
    assert idle[reader.info.backend_pid].application == "bg-reader"
    holders = {h.name: h for h in snap.sessions.xmin_holders if h.kind == "backend"}
    assert {str(writer.info.backend_pid), str(reader.info.backend_pid)} <= set(holders)
    assert holders[str(writer.info.backend_pid)].age_s >= 0.3  # type: ignore[operator]
    assert str(snap.server.monitor_pid) not in holders  # our own poll is not reported as a holder
    ages = [h.xmin_age for h in snap.sessions.xmin_holders]
    assert ages == sorted(ages, reverse=True)
    assert snap.sessions.total_backends >= 3


def test_blocked_session_and_its_blocker(
    dsn: str, queue: JobQueue, background: list[psycopg.Connection]
) -> None:
    (job_id,) = queue.enqueue("a", [{}])
    blocker = open_bg(dsn, background, "bg-blocker")
    blocker.execute("UPDATE jobs SET priority = 1 WHERE id = %s", (job_id,))
    waiter = open_bg(dsn, background, "bg-waiter", autocommit=True)
    thread = threading.Thread(
        target=lambda: waiter.execute("UPDATE jobs SET priority = 2 WHERE id = %s", (job_id,)), daemon=True
    )
    thread.start()
    try:
        for _ in range(100):
            snap = collect(dsn)
            if snap.sessions.blocked:
                break
            time.sleep(0.05)
        (b,) = snap.sessions.blocked
        assert (b.blocked_pid, b.blocking_pid) == (waiter.info.backend_pid, blocker.info.backend_pid)
        assert b.blocking_state == "idle in transaction" and b.blocking_application == "bg-blocker"
        assert b.blocked_query is not None and "priority = 2" in b.blocked_query
        assert b.blocked_wait_s is not None and b.blocked_wait_s >= 0
        assert "priority = 1" in (b.blocking_query or "")
    finally:
        blocker.rollback()
        thread.join(10)
    assert collect(dsn).sessions.blocked == ()


def test_pgq_top_sessions_are_labelled_not_hidden(dsn: str, background: list[psycopg.Connection]) -> None:
    ours = open_bg(dsn, background, "pgq-top action")
    ours.execute("SELECT txid_current()")
    with pgq_monitor(dsn) as monitor:
        snap = monitor.collect()
        assert snap.server.monitor_pid == monitor.pid
    (s,) = [s for s in snap.sessions.idle_in_transaction if s.pid == ours.info.backend_pid]
    assert s.is_pgq_top
    (h,) = [h for h in snap.sessions.xmin_holders if h.name == str(ours.info.backend_pid)]
    assert h.is_pgq_top


def test_prepared_transaction_holds_xmin(dsn: str, sql: psycopg.Connection, background: list) -> None:
    if int(sql.execute("SHOW max_prepared_transactions").fetchone()[0]) == 0:  # type: ignore[index]
        pytest.skip("max_prepared_transactions = 0 on this server")
    conn = open_bg(dsn, background, "bg-2pc")
    conn.execute("SELECT txid_current()")
    conn.execute("PREPARE TRANSACTION 'pgq-test-gid'")
    try:
        holders = {(h.kind, h.name) for h in collect(dsn).sessions.xmin_holders}
        assert ("prepared transaction", "pgq-test-gid") in holders
    finally:
        sql.execute("ROLLBACK PREPARED 'pgq-test-gid'")
