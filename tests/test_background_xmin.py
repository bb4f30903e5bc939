"""The background counter holds back the xmin horizon for one statement at a time, never for a pass
(issue 25: "a monitor must not pin the xmin horizon" it watches). Measured on a real server: its
backend is sampled in pg_stat_activity while it counts two slow statements."""

from __future__ import annotations

import dataclasses
import threading
import time
from datetime import timedelta

import psycopg
from test_engine_errors import count_statement, garbled, pgq_model

from pgq_tui.monitor.background import APPLICATION_NAME
from pgq_tui.monitor.collect import Monitor
from pgq_tui.queue import JobQueue

SLEEP_S = 0.6  # each of the two count statements, made slow on purpose

SAMPLE = """
SELECT state, backend_xmin IS NOT NULL AS holds_xmin, xact_start, query_start, now() - xact_start AS held
FROM pg_stat_activity WHERE application_name = %s
"""


def test_the_background_count_holds_the_xmin_horizon_for_one_statement_only(
    dsn: str, queue: JobQueue
) -> None:
    queue.enqueue("mail", [{"n": i} for i in range(12)])
    queue.claim("mail", limit=2)  # running jobs: the states statement has a row to sleep on
    model = pgq_model(dsn)
    slow = {
        count_statement(model, "ready"): ("ready", f"(SELECT g.ready FROM pg_sleep({SLEEP_S}))"),
        count_statement(model, "stuck"): ("running", f"(SELECT g.running FROM pg_sleep({SLEEP_S}))"),
    }
    counts = tuple(garbled(s, *slow[s]) if s in slow else s for s in model.counts)
    samples: list[tuple[str, bool, object, object, timedelta]] = []
    stop = threading.Event()

    def sample() -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            while not stop.is_set():
                samples.extend(conn.execute(SAMPLE, (APPLICATION_NAME,)).fetchall())
                time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        with Monitor(dsn, dataclasses.replace(model, counts=counts), count_cap=5) as monitor:
            first = monitor.collect()
            assert any(q.accuracy("ready") == "at_least" for q in first.queues)  # over the cap
            assert monitor.settle(30.0)  # the background pass: both slow statements, one snapshot
            landed = monitor.collect()
    finally:
        stop.set()
        sampler.join()
    mail = next(q for q in landed.queues if q.queue == "mail")
    assert (mail.ready, mail.accuracy("ready")) == (10, "stale")
    # a backend still starting up (its connection reads the catalogs in a transaction of its own,
    # before any query: query_start is null) is not a count
    holding = [s for s in samples if s[1] and s[3] is not None]
    assert holding, samples  # the sampler saw the count run
    for state, _, xact_start, query_start, _ in holding:
        # xmin only while a statement runs, and its transaction is that one statement: it began when
        # the statement was parsed (its planning: milliseconds), not one slow statement earlier
        begun = (query_start - xact_start).total_seconds()
        assert state == "active" and 0 <= begun < SLEEP_S / 2, (state, xact_start, query_start)
    assert not [s for s in samples if s[0] == "idle in transaction"], samples
    longest = max(s[4] for s in holding).total_seconds()
    # both slow statements ran inside the one statement (>= 2 x SLEEP_S), far below its budget
    assert 2 * SLEEP_S * 0.9 <= longest < 20.0, longest
    print(f"background counter: xmin held {longest:.3f} s, one statement ({len(holding)} samples)")
