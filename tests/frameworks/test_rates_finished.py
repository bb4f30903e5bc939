"""done/s and failed/s (and pg-boss's enqueued/s) per queue from each framework's own timestamps
(QueueModel.finished), with its real client and worker on its stock schema: the rates of consecutive
polls, times their windows, add up to exactly the jobs the worker finished and failed (ground truth
from the framework's tables and the worker's own record), whoever wrote them."""

from __future__ import annotations

import time

import pytest

from pgq_tui.detection import single_queue
from pgq_tui.monitor import open_monitor

from .harness import Processes, runs
from .pgboss_client import PgBoss
from .pgqueuer_client import Pgqueuer
from .procrastinate_client import Procrastinate

FRAMEWORKS = [
    pytest.param(PgBoss, "pg-boss", id="pg-boss"),
    pytest.param(Procrastinate, "procrastinate", id="procrastinate"),
    pytest.param(Pgqueuer, "pgqueuer", id="pgqueuer"),
]
FAST, FAIL = 6, 3


@pytest.mark.parametrize(("driver_class", "kind"), FRAMEWORKS)
def test_finished_rates_add_up_to_what_the_worker_did(
    framework_dsn: str, processes: Processes, driver_class: type, kind: str
) -> None:
    driver_class.version()  # skips (or fails under PGQ_REQUIRE_FRAMEWORKS=1) without the client
    driver = driver_class(framework_dsn)
    driver.install()
    target = single_queue(framework_dsn, kind=kind)
    assert target.model.finished is not None
    totals: dict[tuple[str, str], float] = {}
    with open_monitor(framework_dsn, target.model, rate_window_s=1) as monitor:
        monitor.collect()  # the first poll: the windows start here
        for i in range(FAST):
            driver.enqueue("fast", f"fast-{i}")
        for i in range(FAIL):
            driver.enqueue("fail", f"fail-{i}")
        driver.start_worker(processes, fixed=False, queues=["fast", "fail"])
        deadline, settled = time.monotonic() + 60, 0
        while time.monotonic() < deadline and settled < 3:  # 3 polls after the last job ended
            time.sleep(1.1)  # polls more than rate_window_s apart: consecutive windows, no overlap
            snap = monitor.collect()
            tp = snap.throughput
            assert tp.rates_note is None and "throughput" not in snap.errors, (tp.rates_note, snap.errors)
            if tp.timestamps_window_s is not None:
                for q, r in tp.per_queue.items():
                    for name in ("enqueued", "completed", "failed"):
                        figure = r.figures.get(name)
                        if figure is not None and figure.source == "timestamps":
                            value = getattr(r, name) or 0.0
                            totals[(q, name)] = totals.get((q, name), 0.0) + value * tp.timestamps_window_s
            ended = {(k, p) for k, _, p in runs(framework_dsn) if p in ("done", "fail")}
            settled = settled + 1 if len(ended) >= FAST + FAIL else 0
    truth = {state for _, _, state in driver.truth()}
    assert settled >= 3, (runs(framework_dsn), truth)
    got = {k: round(v, 6) for k, v in totals.items() if v}
    assert got.get(("fast", "completed")) == pytest.approx(FAST, abs=1e-6), got
    assert got.get(("fail", "failed")) == pytest.approx(FAIL, abs=1e-6), got
    assert ("fast", "failed") not in got and ("fail", "completed") not in got, got
    if "enqueued" in target.model.finished.columns:  # pg-boss: from created_on (uuid ids)
        assert got.get(("fast", "enqueued")) == pytest.approx(FAST, abs=1e-6), got
        assert got.get(("fail", "enqueued")) == pytest.approx(FAIL, abs=1e-6), got


def test_a_large_unindexed_scan_is_not_run_and_says_why(
    framework_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pg-boss has no index on created_on/completed_on: above the page limit the poll does not scan
    job, and the rates are unknown with the reason, never 0 (here: a limit of 0 pages)."""
    from pgq_tui.monitor import finished

    PgBoss.version()
    boss = PgBoss(framework_dsn)
    boss.install()
    boss.enqueue("fast", "fast-0")
    monkeypatch.setattr(finished, "MAX_SCAN_PAGES", 0)
    target = single_queue(framework_dsn, kind="pg-boss")
    with open_monitor(framework_dsn, target.model, rate_window_s=1) as monitor:
        monitor.collect()
        time.sleep(1.1)
        boss.enqueue("fast", "fast-1")
        snap = monitor.collect()
    tp = snap.throughput
    assert tp.rates_note is not None and "not counted" in tp.rates_note and "pgboss.job" in tp.rates_note
    fast = tp.per_queue.get("fast")
    assert fast is None or (fast.enqueued is None and fast.completed is None)
    assert "rates_note" in snap.to_dict()["throughput"]
