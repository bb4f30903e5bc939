"""Errors in the engine (issue 25): rows a panel cannot read fail that panel alone, with the error's class
and message, never the whole poll; the background counter says its error and keeps running.

The bad rows come from a real server: pgq-top's own dialect statements, each wrapped in a SELECT that
turns one column into something its row parser rejects (a dialect with a bug), run by a real Monitor."""

from __future__ import annotations

import dataclasses
import time

import psycopg
import pytest
from test_tui_app import seed_stuck

from pgq_tui.detection import single_queue
from pgq_tui.dialects.contract import QueueModel, Statement
from pgq_tui.monitor.collect import Monitor
from pgq_tui.queue import JobQueue


def garbled(statement: Statement, column: str, expression: str) -> Statement:
    """The dialect's own statement with `column` of each row replaced by `expression` (SQL over the
    statement's row `g`): a statement whose rows its parser cannot read."""
    cols = ", ".join(f"{expression} AS {c}" if c == column else f"g.{c}" for c in statement.columns)
    text = f"SELECT {cols} FROM (\n{statement.text}\n) g"
    return dataclasses.replace(statement, name=f"{statement.name}.garbled", text=text)


def pgq_model(dsn: str) -> QueueModel:
    return single_queue(dsn, kind="pgq").model


def count_statement(model: QueueModel, column: str) -> Statement:
    return next(s for s in model.counts if column in s.columns)


def test_rows_a_panel_cannot_read_fail_that_panel_alone(dsn: str, queue: JobQueue) -> None:
    queue.enqueue("mail", [{"n": i} for i in range(3)])
    seed_stuck(dsn, "mail", 2)
    model = pgq_model(dsn)
    states = count_statement(model, "stuck")  # running, stuck, dead: one statement
    assert model.leases is not None
    bad = dataclasses.replace(
        model,
        counts=tuple(garbled(s, "stuck", "g.stuck || ' jobs'") if s is states else s for s in model.counts),
        leases=garbled(model.leases, "liveness", "'zombie'::text"),
    )
    with Monitor(dsn, bad) as monitor:
        snap = monitor.collect()  # does not raise: the poll stands
    assert snap.errors["leases"] == "ValueError: 'zombie' is not a valid Liveness", snap.errors
    assert snap.errors["queues"] == "ValueError: invalid literal for int() with base 10: '2 jobs'"
    assert snap.leases.total is None and snap.stuck.rows == ()  # the panel is empty and says why
    (mail,) = snap.queues
    # the statement whose rows did not parse: its counts unknown with the error, never 0
    for name in ("running", "stuck", "dead"):
        assert mail.count(name) is None, (name, mail)
        figure = mail.figures[name]
        assert figure.accuracy == "unknown" and figure.reason == f"count failed: {snap.errors['queues']}"
    assert snap.unknown["stuck"].startswith("count failed: ValueError: ")
    # the other count statements and every other panel stand
    assert (mail.ready, mail.accuracy("ready")) == (3, "exact")
    assert not {"table", "sessions", "dead", "throughput"} & set(snap.errors), snap.errors
    assert snap.table.live_tuples >= 0 and snap.sessions.total_backends >= 1 and snap.server.collect_ms > 0
    # and what rests on them says unknown, not healthy: check's stuck measure
    from pgq_tui.check.rules import measures

    stuck = next(m for m in measures(snap) if m.label == "stuck")
    assert stuck.value is None and stuck.level == "unknown" and "ValueError" in stuck.message, stuck


def test_the_background_counter_says_its_error_and_keeps_running(dsn: str, queue: JobQueue) -> None:
    """A count past the cap goes to the background counter, whose uncapped rows (cap1 NULL) do not
    parse while a marker table exists: its error is on the figures, the thread lives, and once the
    marker is gone its next count lands."""
    queue.enqueue("mail", [{"n": i} for i in range(12)])
    model = pgq_model(dsn)
    pending = count_statement(model, "ready")
    bad_ready = (
        "CASE WHEN to_regclass('public.break_counts') IS NOT NULL AND %(cap1)s::int IS NULL"
        " THEN 'lots' ELSE g.ready::text END"
    )
    bad = dataclasses.replace(
        model, counts=tuple(garbled(s, "ready", bad_ready) if s is pending else s for s in model.counts)
    )
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE break_counts ()")
    with Monitor(dsn, bad, count_cap=5, count_interval_s=0.2) as monitor:
        first = monitor.collect()
        mail = next(q for q in first.queues if q.queue == "mail")
        assert (mail.ready, mail.accuracy("ready")) == (5, "at_least")  # over the cap: the background's
        assert not monitor.settle(30.0)  # the background count failed (it did not hang or vanish)
        snap = monitor.collect()
        assert snap.counts is not None and snap.counts.background == "failed", snap.counts
        assert snap.counts.error == "ValueError: invalid literal for int() with base 10: 'lots'"
        thread = monitor._counter._thread
        assert thread is not None and thread.is_alive()  # never a silently stopped thread
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE break_counts")
        deadline = time.monotonic() + 30
        while True:  # it retries on its own (after twice its pacing wait)
            snap = monitor.collect()
            mail = next(q for q in snap.queues if q.queue == "mail")
            if mail.accuracy("ready") == "stale":
                break
            assert time.monotonic() < deadline, (snap.counts, mail)
            time.sleep(0.2)
        assert mail.ready == 12 and snap.counts is not None and snap.counts.error is None
        assert snap.counts.background == "ready" and thread.is_alive()


@pytest.fixture(autouse=True)
def _no_marker(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS break_counts")
