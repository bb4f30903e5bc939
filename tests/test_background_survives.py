"""The background counter survives the link (issue 29, item 3), on the seed article's stock `jobs`
table with its scans left to the background (scan_pages=0: every relation counts as large here):

- pgq-top's backends are terminated while a monitor polls; 5 more jobs get stuck: the background
  figure follows within two background lags, through the Monitor (the dashboard's path) and through
  the TargetWatch the exporter, `record` and the fleet screen poll with;
- one background statement past its statement_timeout fails alone: the others land, and its figures
  say why;
- a ready count oscillating around the cap does not restart the scans: the counter's measured busy
  time stays within 10% of one backend.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from dialect_cases.seed import SEED_JOBS, seed_jobs_populate
from test_engine_errors import garbled

from pgq_tui.detection import single_queue
from pgq_tui.dialects.contract import QueueModel
from pgq_tui.errors import PgqError
from pgq_tui.fleet.poll import TargetWatch
from pgq_tui.monitor.collect import Monitor
from pgq_tui.monitor.snapshot import STALE, UNKNOWN, Figure, Snapshot
from pgq_tui.targets import Target

TERMINATE = (
    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
    " WHERE application_name LIKE 'pgq-top%%' AND pid <> pg_backend_pid() AND datname = %s"
)
FLOOR_S = 1.0  # the counter's pacing floor (count_interval_s), also its first backoff after a lost link
STICK_5 = (
    "INSERT INTO jobs (queue, payload, status, locked_until)"
    " SELECT 'mail', '{}', 'running', now() - interval '1 minute' FROM generate_series(1, 5)"
)


@pytest.fixture
def stock(empty_dsn: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(SEED_JOBS)
        seed_jobs_populate(empty_dsn)
        yield conn


def seed_model(dsn: str) -> QueueModel:
    return single_queue(dsn, table="jobs").model


def stuck_of(snap: Snapshot, queue: str = "mail") -> tuple[int | None, str]:
    q = next(q for q in snap.queues if q.queue == queue)
    return q.stuck, q.figures["stuck"].accuracy


def figure_of(snap: Snapshot, queue: str = "mail") -> Figure:
    return next(q for q in snap.queues if q.queue == queue).figures["stuck"]


def follow_through_terminations(
    conn: psycopg.Connection, poll: Callable[[], Snapshot | None], lag: Callable[[], float]
) -> tuple[float, float]:
    """Terminate every pgq-top backend of this database, make 5 more jobs stuck, poll until the
    stuck figure shows them; (seconds it took, the longest lag the counter stated meanwhile: the bound
    in force while it followed, which a run slowed by the machine's load lengthens)."""
    deadline = time.monotonic() + 30
    while (snap := poll()) is None or stuck_of(snap)[1] != STALE:  # the first background scan
        assert time.monotonic() < deadline, snap
        time.sleep(0.1)
    before, _ = stuck_of(snap)
    assert before is not None
    dbname = conn.info.dbname
    assert conn.execute(TERMINATE, (dbname,)).fetchone()[0] >= 2  # type: ignore[index]  # poll + counter
    conn.execute(STICK_5)
    changed, changed_at = time.monotonic(), conn.execute("SELECT now()").fetchone()[0]  # type: ignore[index]
    failed_polls, stated = 0, lag()
    while True:
        snap = poll()
        stated = max(stated, lag())
        if snap is None:
            failed_polls += 1  # the poll whose backend was terminated: its session reconnects next time
        elif stuck_of(snap) == (before + 5, STALE):
            assert figure_of(snap).as_of >= changed_at  # type: ignore[operator]
            return time.monotonic() - changed, stated
        else:  # the old value keeps its true as_of, getting older: never relabelled as fresh
            assert stuck_of(snap)[0] == before and figure_of(snap).as_of < changed_at, snap  # type: ignore[operator]
        assert time.monotonic() - changed < 30, ("the background figure never followed", snap, failed_polls)
        time.sleep(0.1)


def test_the_monitor_follows_the_truth_after_its_backends_are_terminated(empty_dsn: str, stock) -> None:
    with Monitor(empty_dsn, seed_model(empty_dsn), scan_pages=0, count_interval_s=FLOOR_S) as monitor:

        def poll() -> Snapshot | None:
            try:
                return monitor.collect()
            except PgqError:
                return None

        took, lag = follow_through_terminations(stock, poll, lambda: monitor._counter.max_lag_s)
        thread = monitor._counter._thread
        assert thread is not None and thread.is_alive()
    print(f"monitor: followed in {took:.2f} s (stated lag {lag:.2f} s)")
    # two background lags, plus the link's first backoff (the pacing floor) and a poll's slack
    assert took <= 2 * lag + FLOOR_S + 0.5, (took, lag)


def test_the_exporter_and_records_watch_follows_the_truth_after_its_backends_are_terminated(
    empty_dsn: str, stock
) -> None:
    """TargetWatch is what the exporter, `record` and the fleet screen poll through."""
    target = Target("seed", empty_dsn, table="jobs")
    with TargetWatch(target, scan_pages=0, count_interval_s=FLOOR_S) as watch:

        def poll() -> Snapshot | None:
            (outcome,) = watch.collect()
            return outcome.outcome if isinstance(outcome.outcome, Snapshot) else None

        def lag() -> float:
            return max(m._counter.max_lag_s for m in watch._monitors)

        took, stated = follow_through_terminations(stock, poll, lag)
    print(f"watch: followed in {took:.2f} s (stated lag {stated:.2f} s)")
    assert took <= 2 * stated + FLOOR_S + 0.5, (took, stated)


def test_one_background_statement_past_its_timeout_fails_alone(empty_dsn: str, stock) -> None:
    """The stuck/running scan sleeps past the counter's statement_timeout; the lease list scan and
    the indexed counts over the cap still land, each with its own as_of, and the failed figures say
    why (on the figure and in Snapshot.unknown)."""
    model = seed_model(empty_dsn)
    scan = next(s for s in model.counts if "stuck" in s.columns)
    assert not scan.indexed
    slow = garbled(scan, "stuck", "(SELECT g.stuck FROM pg_sleep(2))")
    model = dataclasses.replace(model, counts=tuple(slow if s is scan else s for s in model.counts))
    stock.execute(
        "INSERT INTO jobs (queue, payload)"
        " SELECT q, '{}' FROM unnest('{mail,thumbs}'::text[]) q, generate_series(1, 10)"
    )
    with Monitor(empty_dsn, model, scan_pages=0, count_cap=3, count_budget_ms=400, count_interval_s=0.2) as m:
        first = m.collect()
        assert m.settle(10.0) is False  # one statement failed
        snap = m.collect()
    truth = dict(
        stock.execute(
            "SELECT queue, count(*) FROM jobs WHERE status = 'pending' AND run_at <= now() GROUP BY 1"
        )
    )
    for q in snap.queues:
        # the indexed counts over the cap (12 ready per queue, cap 3) landed: exact as of their moment
        assert (q.ready, q.accuracy("ready")) == (truth[q.queue], STALE), q
        for name in ("stuck", "running"):  # the slow scan's figures: unknown, with its own reason
            f = q.figures[name]
            assert q.count(name) is None and f.accuracy == UNKNOWN, (name, f)
            assert f.reason is not None and "statement timeout" in f.reason, f
    assert "statement timeout" in snap.unknown.get("stuck", ""), snap.unknown
    # the lease list, a scan of its own, landed: the stuck jobs are listed, stale with their as_of
    stuck_ids = [
        r[0] for r in stock.execute("SELECT id FROM jobs WHERE status = 'running' AND locked_until < now()")
    ]
    assert sorted(r.id for r in snap.stuck.rows) == sorted(stuck_ids)
    assert snap.stuck.figure is not None and snap.stuck.figure.accuracy == STALE
    assert first.server.now <= snap.stuck.figure.as_of <= snap.server.now  # type: ignore[operator]
    assert (
        snap.counts is not None and snap.counts.error is not None and "statement timeout" in snap.counts.error
    )


def test_a_ready_count_oscillating_around_the_cap_keeps_the_duty(empty_dsn: str, stock) -> None:
    """Ready goes 5 over the cap and 5 under it at every other poll. Before the cap had hysteresis,
    each crossing restarted a full background pass (its scans too) at poll frequency."""
    cap = 40
    stock.execute(  # kept done rows: what makes each background scan cost something
        "INSERT INTO jobs (queue, payload, status)"
        " SELECT 'mail', '{}', 'done' FROM generate_series(1, 300000)"
    )
    stock.execute("VACUUM ANALYZE jobs")
    ready = stock.execute(
        "SELECT count(*) FROM jobs WHERE queue = 'mail' AND status = 'pending' AND run_at <= now()"
    )
    have = ready.fetchone()[0]  # type: ignore[index]
    stock.execute(
        "INSERT INTO jobs (queue, payload) SELECT 'mail', '{}' FROM generate_series(1, %s)", (cap + 5 - have,)
    )
    with Monitor(
        empty_dsn, seed_model(empty_dsn), scan_pages=0, count_cap=cap, count_interval_s=FLOOR_S
    ) as m:
        counter = m._counter
        m.collect()
        assert m.settle(20.0)
        start, busy0 = time.monotonic(), counter.busy_s
        polls = 0
        while time.monotonic() - start < 12.0:
            if polls % 2 == 0:  # under the cap (cap - 5), then over it again (cap + 5)
                stock.execute(
                    "DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE queue = 'mail'"
                    " AND status = 'pending' AND payload = '{}' AND run_at <= now() LIMIT 10)"
                )
            else:
                stock.execute(
                    "INSERT INTO jobs (queue, payload) SELECT 'mail', '{}' FROM generate_series(1, 10)"
                )
            m.collect()
            polls += 1
            time.sleep(0.1)
        busy = counter.busy_s - busy0
        # whole cycles: the window ends where the rest after the last counted statement does (a
        # statement counted just before the end would otherwise count without its rest)
        wall = max(time.monotonic(), counter._idle_until) - start
    duty = busy / wall
    print(f"background duty {duty:.1%} ({busy:.2f} s busy in {wall:.1f} s, {polls} polls)")
    assert duty <= 0.10, (busy, wall)


async def test_the_dashboard_follows_the_truth_after_its_backends_are_terminated(
    empty_dsn: str, stock: psycopg.Connection
) -> None:
    """The Textual app itself (a pilot), polling the same Monitor: its rendered snapshot follows."""
    from pgq_tui.tui.app import PgqTopApp

    monitor = Monitor(empty_dsn, seed_model(empty_dsn), scan_pages=0, count_interval_s=FLOOR_S)
    app = PgqTopApp(monitor, interval=0.3)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            deadline = time.monotonic() + 30
            # the app's poll period as it runs before the cut (0.3 s asked; a loaded machine
            # stretches each poll): the bound below allows two of them
            seen, last_new, period = app.snapshot, time.monotonic(), 0.3
            while app.snapshot is None or stuck_of(app.snapshot)[1] != STALE:
                assert time.monotonic() < deadline, app.snapshot
                await pilot.pause(0.1)
                if app.snapshot is not seen:
                    now = time.monotonic()
                    if seen is not None:
                        period = max(period, now - last_new)
                    seen, last_new = app.snapshot, now
            before = stuck_of(app.snapshot)[0]
            assert before is not None
            stock.execute(TERMINATE, (stock.info.dbname,))
            stock.execute(STICK_5)
            changed, lag = time.monotonic(), monitor._counter.max_lag_s
            while app.snapshot is None or stuck_of(app.snapshot) != (before + 5, STALE):
                assert time.monotonic() - changed < 30, ("the dashboard never followed", app.error)
                await pilot.pause(0.1)
                lag = max(lag, monitor._counter.max_lag_s)  # the bound in force while it followed
            took = time.monotonic() - changed
    finally:
        monitor.close()
    print(f"dashboard: followed in {took:.2f} s (stated lag {lag:.2f} s, poll period {period:.2f} s)")
    # two lags, the first backoff, two polls
    assert took <= 2 * lag + FLOOR_S + 2 * period, (took, lag, period)


def test_record_follows_the_truth_after_its_backends_are_terminated(
    empty_dsn: str, stock: psycopg.Connection, tmp_path: Path
) -> None:
    """`record` as it runs (its defaults: the tier from the table's real size, a 2 s pacing floor) on
    a stock table past the in-poll scan size; the recording's last polls show the 5 new stuck jobs."""
    from test_history import wait_polls

    from pgq_tui.history.record import record
    from pgq_tui.history.store import Recorder, Recording

    stock.execute(  # 300k kept done rows: far past the in-poll scan size (tiers.SCAN_PAGES)
        "INSERT INTO jobs (queue, payload, status)"
        " SELECT 'mail', '{}', 'done' FROM generate_series(1, 300000)"
    )
    stock.execute("VACUUM ANALYZE jobs")
    path = tmp_path / "rec.pgq"
    stop = threading.Event()
    target = Target("seed", empty_dsn, table="jobs")
    thread = threading.Thread(
        target=lambda: record(
            [target], Recorder(path), interval_s=0.3, duration_s=None, stop=stop, log=sys.stderr
        )
    )
    thread.start()

    def last() -> Snapshot | None:
        with Recording(path) as rec:
            (queue,) = rec.queues()
            refs = rec.polls(queue)
            return rec.snapshot(refs[-1]) if refs else None

    try:
        wait_polls(path, 1)
        deadline = time.monotonic() + 60
        while (snap := last()) is None or stuck_of(snap)[1] != STALE:
            assert time.monotonic() < deadline, snap
            time.sleep(0.2)
        before = stuck_of(snap)[0]
        assert before is not None
        assert stock.execute(TERMINATE, (stock.info.dbname,)).fetchone()[0] >= 2  # type: ignore[index]
        stock.execute(STICK_5)
        changed, lag = time.monotonic(), 0.0
        while (snap := last()) is None or stuck_of(snap) != (before + 5, STALE):
            assert time.monotonic() - changed < 60, ("the recording never followed", snap)
            if snap is not None and snap.counts is not None:  # the bound in force while it followed
                lag = max(lag, snap.counts.max_lag_s)
            time.sleep(0.2)
        took = time.monotonic() - changed
        assert snap.counts is not None
        lag = max(lag, snap.counts.max_lag_s)
    finally:
        stop.set()
        thread.join(15)
    print(f"record: followed in {took:.2f} s (stated lag {lag:.2f} s)")
    # two lags, the first backoff (the 2 s pacing floor) and a poll
    assert took <= 2 * lag + 2.0 + 0.3 + 0.5, (took, lag)


def test_the_exporter_scrapes_the_truth_after_its_backends_are_terminated(empty_dsn: str, stock) -> None:
    """The exporter's own collector over its cache over the TargetWatch: the scraped series follows."""
    from test_unknown_figures import scrape

    target = Target("seed", empty_dsn, table="jobs")
    with TargetWatch(target, scan_pages=0, count_interval_s=FLOOR_S) as watch:
        stuck = ("pgq_jobs", "mail", "stuck")
        deadline = time.monotonic() + 30
        while stuck not in (series := scrape(watch)):  # absent until the first background scan
            assert time.monotonic() < deadline, series
            time.sleep(0.1)
        before = series[stuck]
        assert stock.execute(TERMINATE, (stock.info.dbname,)).fetchone()[0] >= 2  # type: ignore[index]
        stock.execute(STICK_5)
        changed, lag = time.monotonic(), 0.0
        while scrape(watch).get(stuck) != before + 5:
            assert time.monotonic() - changed < 30, "the exporter never followed"
            lag = max([lag, *(m._counter.max_lag_s for m in watch._monitors)])  # the bound in force
            time.sleep(0.1)
        took = time.monotonic() - changed
        lag = max([lag, *(m._counter.max_lag_s for m in watch._monitors)])
    print(f"exporter: followed in {took:.2f} s (stated lag {lag:.2f} s)")
    assert took <= 2 * lag + FLOOR_S + 0.5, (took, lag)


def test_merge_keeps_each_statements_own_moment_and_failure() -> None:
    """Pure: the counts' snapshot and two scans landed at different moments make one count, each
    scanned name with its own as_of, a failed statement's names with its reason."""
    from datetime import datetime, timedelta, timezone

    from pgq_tui.monitor.background import merge
    from pgq_tui.monitor.counting import DEPTH, BackgroundCount

    t = datetime(2026, 12, 2, tzinfo=timezone.utc)
    counts = BackgroundCount(t, 3.0, frozenset({"ready"}), {("a", "ready"): 7}, 42, {"a": 1})
    stuck = BackgroundCount(t - timedelta(seconds=9), 40.0, frozenset({"stuck"}), {("a", "stuck"): 2}, 0)
    rows = [{"id": 1}]
    leases = BackgroundCount(t + timedelta(seconds=1), 30.0, frozenset({"list:l"}), {}, 0, lists={"l": rows})
    bg = merge(counts, [stuck, leases], {"dead": "background count failed: timeout"}, DEPTH)
    assert bg is not None
    assert (bg.value("a", "ready"), bg.value("a", "stuck"), bg.value("a", "dead")) == (7, 2, None)
    assert (bg.as_of, bg.as_of_for("ready"), bg.max_id, bg.new) == (t, t, 42, {"a": 1})  # the rates' snapshot
    assert bg.as_of_for("stuck") == t - timedelta(seconds=9) and bg.as_of_for("list:l") == t + timedelta(
        seconds=1
    )
    assert bg.lists == {"l": [{"id": 1}]} and bg.scanned == {"stuck", "list:l"}
    assert bg.failed == {"dead": "background count failed: timeout"} and bg.cost_ms == 73.0
    only_scans = merge(None, [stuck, leases], {}, DEPTH)
    assert only_scans is not None and only_scans.as_of == t - timedelta(seconds=9) and only_scans.new is None
    assert merge(None, [], {"stuck": "x"}, DEPTH) is None  # nothing landed: nothing to show
