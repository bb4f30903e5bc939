"""The poll deadline's watchdog never shuts a healthy socket down after its block ended (issue #29):
a timer that fires as the poll ends, or a late timer of an earlier poll, does nothing. The timer's
call is made by hand here, at the exact moment each race needs; the socket is real."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import psycopg
import pytest

from pgq_tui.db.connect import connect, deadline
from pgq_tui.db.link import Watchdog
from pgq_tui.errors import PgqError

LONG = 600.0  # the armed timer itself never fires during a test: each fire() is called by hand


@pytest.fixture
def conn(dsn: str) -> Iterator[psycopg.Connection]:
    c = connect(dsn, application_name="pgq-top test watchdog")
    yield c
    c.close()


def in_flight(conn: psycopg.Connection, sql: psycopg.Connection, pid: int) -> None:
    """Wait until `conn` is inside a call (psycopg holds its lock) that the server is running."""
    deadline_at = time.monotonic() + 10
    while not (
        conn.lock.locked()
        and sql.execute(
            "SELECT 1 FROM pg_stat_activity WHERE pid = %s AND state = 'active'", (pid,)
        ).fetchone()
    ):
        assert time.monotonic() < deadline_at, "the call never started"
        time.sleep(0.01)


def sleep_in_thread(conn: psycopg.Connection, seconds: float) -> tuple[threading.Thread, list[object]]:
    result: list[object] = []

    def run() -> None:
        try:
            result.append(conn.execute("SELECT pg_sleep(%s)", (seconds,)).fetchone())
        except psycopg.Error as exc:
            result.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, result


def test_a_timer_firing_after_the_last_call_returned_leaves_the_socket_alone(
    conn: psycopg.Connection,
) -> None:
    dog = Watchdog(conn, recheck_s=LONG)
    generation = dog.arm(LONG)
    assert conn.execute("SELECT 1").fetchone() == (1,)  # the poll's last call: answered
    dog.fire(generation)  # the deadline passes right here, before the block disarms
    dog.disarm()
    assert not dog.fired.is_set()
    assert conn.execute("SELECT 2").fetchone() == (2,)  # the next poll's link is healthy
    dog.fire(generation)  # and once disarmed, the same timer does nothing either
    assert conn.execute("SELECT 3").fetchone() == (3,) and not dog.fired.is_set()


def test_a_late_timer_of_an_earlier_block_does_not_cut_the_next_blocks_call(
    conn: psycopg.Connection, sql: psycopg.Connection
) -> None:
    dog = Watchdog(conn, recheck_s=LONG)
    earlier = dog.arm(LONG)
    dog.disarm()
    dog.arm(LONG)  # the next poll, with a call in flight when the earlier poll's timer fires
    thread, result = sleep_in_thread(conn, 0.5)
    in_flight(conn, sql, conn.info.backend_pid)
    dog.fire(earlier)
    thread.join(10)
    dog.disarm()
    assert result == [("",)] and not dog.fired.is_set(), result
    assert conn.execute("SELECT 1").fetchone() == (1,)


def test_the_current_deadline_still_cuts_a_blocked_call_at_once(
    conn: psycopg.Connection, sql: psycopg.Connection
) -> None:
    dog = Watchdog(conn, recheck_s=LONG)
    generation = dog.arm(LONG)
    thread, result = sleep_in_thread(conn, 60)
    in_flight(conn, sql, conn.info.backend_pid)
    begun = time.monotonic()
    dog.fire(generation)
    thread.join(10)
    dog.disarm()
    assert not thread.is_alive() and time.monotonic() - begun < 5
    assert dog.fired.is_set() and isinstance(result[0], psycopg.OperationalError), result


def test_deadline_abandons_a_hung_call_and_a_quick_block_keeps_its_connection(
    conn: psycopg.Connection,
) -> None:
    with deadline(conn, 30):
        assert conn.execute("SELECT 1").fetchone() == (1,)
    assert not conn.closed and conn.execute("SELECT 1").fetchone() == (1,)
    begun = time.monotonic()
    with pytest.raises(PgqError, match=r"no answer from the server within 0\.3 s"), deadline(conn, 0.3):
        conn.execute("SELECT pg_sleep(30)")
    assert time.monotonic() - begun < 5 and conn.closed
