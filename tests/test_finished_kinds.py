"""done/s and failed/s from River's finalized_at, Oban's completed_at/discarded_at and Solid Queue's
finished_at / failed executions (QueueModel.finished), on each framework's migration schema, written
by the framework's own SQL (tests/dialect_cases): the rates of consecutive polls, times their
windows, add up to exactly the jobs finished and failed between them, whoever wrote them."""

from __future__ import annotations

import time
from collections.abc import Callable

import psycopg
import pytest
from dialect_cases import oban, river, solid_queue

from pgq_tui.detection import single_queue
from pgq_tui.monitor import open_monitor
from pgq_tui.monitor.finished import LAG_S

DONE, FAILED = 5, 2  # jobs of queue "a" completed, of queue "b" failed for good


def _river(dsn: str) -> tuple[str, Callable[[], None]]:
    river.install_schema(dsn, "public", 7)
    river.insert(dsn, "public", "a", DONE)
    river.insert(dsn, "public", "b", FAILED, max_attempts=1)

    def work() -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(river.COMPLETE, (river.claim(conn, "a", DONE),))
            conn.execute(river.ERRORED, (river.claim(conn, "b", FAILED),))

    return "river", work


def _oban(dsn: str) -> tuple[str, Callable[[], None]]:
    oban.install_schema(dsn, "public")
    with oban.connect(dsn, "public") as conn:
        oban.insert(conn, "a", DONE)
        oban.insert(conn, "b", FAILED, max_attempts=1)

    def work() -> None:
        with oban.connect(dsn, "public") as conn:
            conn.execute(oban.COMPLETE, (oban.fetch(conn, "a", DONE),))
            conn.execute(oban.ERROR, (oban.fetch(conn, "b", FAILED),))

    return "oban", work


def _solid_queue(dsn: str) -> tuple[str, Callable[[], None]]:
    solid_queue.install(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        solid_queue.enqueue(conn, "a", DONE)
        solid_queue.enqueue(conn, "b", FAILED)
        process = solid_queue.register(conn, "worker", 4242)

    def work() -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(solid_queue.FINISH, (solid_queue.claim(conn, "a", DONE, process),))
            conn.execute(solid_queue.FAIL, (solid_queue.claim(conn, "b", FAILED, process),))

    return "solid_queue", work


@pytest.mark.parametrize("setup", [_river, _oban, _solid_queue], ids=["river", "oban", "solid_queue"])
def test_finished_rates_add_up(
    empty_dsn: str, setup: Callable[[str], tuple[str, Callable[[], None]]]
) -> None:
    if setup is _river:
        pytest.importorskip("riverqueue")
    kind, work = setup(empty_dsn)
    target = single_queue(empty_dsn, kind=kind.replace("_", "-"))
    assert target.model.finished is not None
    totals: dict[tuple[str, str], float] = {}
    with open_monitor(empty_dsn, target.model, rate_window_s=1) as monitor:
        monitor.collect()
        work()
        for _ in range(3):  # the window trails by LAG_S: the polls after it see every change
            time.sleep(max(1.1, LAG_S + 0.1))
            snap = monitor.collect()
            tp = snap.throughput
            assert tp.rates_note is None and "throughput" not in snap.errors, (tp.rates_note, snap.errors)
            span = tp.timestamps_window_s  # the seconds the timestamps' rates are over
            for q, r in tp.per_queue.items():
                for name in ("completed", "failed"):
                    figure = r.figures.get(name)
                    if figure is not None and figure.source == "timestamps" and span is not None:
                        totals[(q, name)] = totals.get((q, name), 0.0) + (getattr(r, name) or 0.0) * span
    got = {k: round(v, 6) for k, v in totals.items() if v}
    assert got == {("a", "completed"): DONE, ("b", "failed"): FAILED}
