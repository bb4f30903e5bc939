"""Per-queue rates for any writer, with each framework's real client: jobs enqueued between two polls
show as that queue's enqueued/s, exactly (from the new ids: the dialect's activity statement), checked
against ground truth (the driver's own SQL). pg-boss's ids are uuids: it has no activity statement, and
its enqueued/s comes from its created_on timestamps (QueueModel.finished) instead."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from pgq_tui.detection import single_queue
from pgq_tui.monitor import open_monitor
from pgq_tui.monitor.finished import LAG_S
from pgq_tui.monitor.snapshot import EXACT

from .cases import follow_index_advice
from .graphile_client import Graphile, Graphile18
from .pgboss_client import PgBoss, PgBoss12
from .pgqueuer_client import Pgqueuer
from .procrastinate_client import Procrastinate
from .river_client import River

FRAMEWORKS = [
    pytest.param(Graphile, "graphile-worker", id="graphile-worker"),
    pytest.param(Graphile18, "graphile-worker", id="graphile-worker-18"),
    pytest.param(PgBoss, "pg-boss", id="pg-boss"),
    pytest.param(PgBoss12, "pg-boss", id="pg-boss-12"),
    pytest.param(Procrastinate, "procrastinate", id="procrastinate"),
    pytest.param(Pgqueuer, "pgqueuer", id="pgqueuer"),
    pytest.param(River, "river", id="river"),
]
ENQUEUED = {"fast": 5, "later": 3}  # "later": scheduled an hour ahead; no worker runs either


@pytest.mark.parametrize(("driver_class", "kind"), FRAMEWORKS)
def test_per_queue_enqueue_rate_matches_the_jobs_the_client_added(
    framework_dsn: str, driver_class: type, kind: str
) -> None:
    driver_class.version()  # skips (or fails under PGQ_REQUIRE_FRAMEWORKS=1) without the client
    driver = driver_class(framework_dsn)
    driver.install()
    follow_index_advice(framework_dsn, kind)  # so every depth state is counted (completed/s)
    target = single_queue(framework_dsn, kind=kind)
    with open_monitor(framework_dsn, target.model, rate_window_s=1) as monitor:
        monitor.collect()  # the first poll learns where the ids are
        before = {job_id for job_id, _, _ in driver.truth()}
        for queue, n in ENQUEUED.items():
            for i in range(n):
                driver.enqueue(queue, f"{queue}-{i}", in_seconds=3600 if queue == "later" else None)
        snap = monitor.collect()
        added = Counter(queue for job_id, queue, _ in driver.truth() if job_id not in before)
        assert added == Counter(ENQUEUED)
        if target.model.activity is None:  # uuid ids (pg-boss): enqueued/s from created_on instead
            time.sleep(LAG_S + 0.2)  # the timestamps' window trails the polls by LAG_S
            later = monitor.collect()
    tp = snap.throughput
    if target.model.activity is None:
        assert "rates" not in snap.unsupported
        for queue, n in added.items():
            seen = 0.0
            for t in (tp, later.throughput):
                r = t.per_queue[queue]
                assert r.figures["enqueued"].source == "timestamps" and t.timestamps_window_s is not None
                seen += (r.enqueued or 0.0) * t.timestamps_window_s
            assert seen == pytest.approx(n, abs=1e-6), queue
        return
    assert "rates" not in snap.unsupported and tp.window_s is not None and tp.source == "table"
    for queue, n in added.items():
        rates = tp.per_queue[queue]
        assert rates.figures["enqueued"].source == "ids" and rates.figures["enqueued"].accuracy == EXACT
        assert rates.enqueued is not None and rates.enqueued * tp.window_s == pytest.approx(n, rel=0.02)
        # nothing ran: every new job is still in the queue, so nothing completed
        assert rates.completed == pytest.approx(0.0, abs=0.01), (queue, rates)
