"""The pool's reaper sleeps until the next lease can expire (read in the reap statement itself): an
idle pool reaps once a lease instead of every few seconds, and a crashed worker's job is still reaped
when its lease runs out (tests/test_queue_heartbeat.py times that end to end)."""

from __future__ import annotations

import doctest

import psycopg
import pytest

from pgq_tui.queue import JobQueue, reaping


def test_doctests() -> None:
    result = doctest.testmod(reaping)
    assert result.attempted > 0 and result.failed == 0


def test_reap_next_says_when_the_next_lease_falls_due(queue: JobQueue, sql: psycopg.Connection) -> None:
    assert queue.reap_next() == (0, None)  # nothing runs: no lease to wait for
    queue.enqueue("mail", [{}, {}, {}])
    held = queue.claim("mail", limit=1, lease=20)
    later = queue.claim("mail", limit=1, lease=40)
    reaped, due = queue.reap_next()
    assert reaped == 0 and due == pytest.approx(20, abs=2)  # the earliest of the running leases
    # the first lease expires: reaped, and the next due is the other one
    sql.execute("UPDATE jobs SET locked_until = now() - interval '1 second' WHERE id = %s", (held[0].id,))
    reaped, due = queue.reap_next()
    assert reaped == 1 and due == pytest.approx(40, abs=2)
    assert sql.execute("SELECT status FROM jobs WHERE id = %s", (held[0].id,)).fetchone() == ("pending",)
    assert sql.execute("SELECT status FROM jobs WHERE id = %s", (later[0].id,)).fetchone() == ("running",)
