"""The claims' direct path (queue/direct.py): libpq's prepared-statement call instead of a cursor.
Same rows and the same errors as the cursor path, a lost connection reconnected by the next claim,
and never used through a transaction pooler."""

from __future__ import annotations

import doctest

import psycopg
import pytest

from pgq_tui.queue import JobQueue, direct


def test_doctests() -> None:
    assert doctest.testmod(direct).failed == 0


def test_only_named_placeholders_are_taken() -> None:
    with pytest.raises(ValueError):
        direct.positional(b"SELECT %s")
    with pytest.raises(ValueError):
        direct.positional(b"SELECT '100%%'")


def test_parameters_in_text_form() -> None:
    assert [direct._text(v) for v in ("é", 3, 2.5, True, None)] == [b"\xc3\xa9", b"3", b"2.5", b"true", None]
    assert direct._text(direct.IntArray([5_000_000_000, -1])) == b"{5000000000,-1}"
    with pytest.raises(TypeError):
        direct._text([1, 2])  # a plain list: no guessing at its element type


def test_claims_are_prepared_statements_of_their_own(queue: JobQueue) -> None:
    queue.enqueue("q", [{"n": n} for n in range(4)])
    first = queue.claim("q", limit=2)
    accepted, following = queue.complete_and_claim(first, "q", limit=2)
    assert accepted == 2 and [j.payload for j in following] == [{"n": 2}, {"n": 3}]
    names = [
        r[0]
        for r in queue.conn.execute(
            "SELECT name FROM pg_prepared_statements WHERE name LIKE 'pgq%' ORDER BY name"
        )
    ]
    assert names == ["pgq_direct_0", "pgq_direct_1"], "the claims did not take the direct path"


def test_a_lost_connection_is_an_operational_error_and_the_next_claim_reconnects(
    queue: JobQueue, sql: psycopg.Connection
) -> None:
    ids = queue.enqueue("q", [{}] * 3)
    held = queue.claim("q", limit=1)
    sql.execute("SELECT pg_terminate_backend(%s)", (queue.conn.info.backend_pid,))
    with pytest.raises(psycopg.OperationalError):
        queue.complete_and_claim(held, "q", limit=1)
    # The statement never ran: the held job is still ours, nothing was claimed. A new connection
    # prepares its statements anew.
    accepted, following = queue.complete_and_claim(held, "q", limit=1)
    assert accepted == 1 and [j.id for j in following] == ids[1:2]
    assert [j.id for j in queue.claim("q", limit=5)] == ids[2:]


def test_a_server_error_keeps_its_class_and_the_connection(dsn: str, sql: psycopg.Connection) -> None:
    with JobQueue(dsn, lock_timeout_ms=50) as q, psycopg.connect(dsn) as blocker:
        q.enqueue("q", [{}] * 2)
        held = q.claim("q", limit=1)
        blocker.execute("SELECT 1 FROM jobs WHERE id = %s FOR UPDATE", (held[0].id,))
        pid = q.conn.info.backend_pid
        with pytest.raises(psycopg.errors.LockNotAvailable):
            q.complete_and_claim(held, "q", limit=1)
        blocker.rollback()
        accepted, following = q.complete_and_claim(held, "q", limit=1)
        assert accepted == 1 and len(following) == 1 and q.conn.info.backend_pid == pid


def test_deallocated_statements_are_prepared_again(queue: JobQueue) -> None:
    """psycopg sends DEALLOCATE ALL on a connection after a ROLLBACK, DROP, ALTER or DISCARD ALL
    there; the claims prepare theirs again instead of failing the worker."""
    ids = queue.enqueue("q", [{}] * 4)
    held = queue.claim("q", limit=1)  # prepares the claim (LIMIT 1)
    _, held = queue.complete_and_claim(held, "q", limit=1)  # and the combined statement
    queue.conn.execute("DEALLOCATE ALL")
    accepted, following = queue.complete_and_claim(held, "q", limit=1)  # the same statement again
    assert accepted == 1 and [j.id for j in following] == ids[2:3]
    queue.conn.execute("DEALLOCATE ALL")
    assert [j.id for j in queue.claim("q", limit=1)] == ids[3:]
