"""Unknown lists are never zero: a list the background counter has not scanned yet (or cannot scan in
its budget), whose queue counts are unknown too, has a null total in JSON and "(?)" in its panel
title and in the readable snapshot, never "(0)". Real causes on a real server: the seed article's
stock table and pgq-top's own table without its dead-letter index, both counted as large (their
scans are the background counter's): at the first poll none has landed; on screen, a budget no scan
meets keeps it so."""

from __future__ import annotations

import json
from io import StringIO

import psycopg
import tui_support
from dialect_cases import seed
from monitor_support import pgq_monitor, slow_scans
from rich.console import Console

from pgq_tui.detection import find_queues
from pgq_tui.monitor.collect import Monitor, open_monitor
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.queue import JobQueue
from pgq_tui.render.snapshot import render


def _stock(empty_dsn: str) -> str:
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(seed.SEED_JOBS)
    seed.seed_jobs_populate(empty_dsn)
    return empty_dsn


def _unlanded(monitor: Monitor) -> Snapshot:
    """The first poll: the background counter is only now asked for the scans, none has landed."""
    snap = monitor.collect()
    assert snap.counts is not None and snap.counts.as_of is None, snap.counts
    return snap


def test_a_list_not_landed_has_a_null_total_and_a_question_mark(empty_dsn: str) -> None:
    dsn = _stock(empty_dsn)
    (target,) = find_queues(dsn)
    with open_monitor(dsn, target.model, read_only=True, scan_pages=0) as monitor:
        snap = _unlanded(monitor)
    assert all(q.stuck is None for q in snap.queues)  # the counts can't give the total either
    doc = json.loads(json.dumps(snap.to_dict()))
    for name in ("stuck", "leases"):
        assert doc[name]["rows"] == [] and doc[name]["figure"]["accuracy"] == "unknown", doc[name]
        assert doc[name]["total"] is None, doc[name]  # never 0
    out = StringIO()
    Console(file=out, width=160).print(render(snap))
    assert "stuck jobs (?)" in out.getvalue() and "stuck jobs (0)" not in out.getvalue()
    # the Snapshot read back from its JSON keeps the unknown
    assert Snapshot.from_dict(doc).stuck.total is None


def test_lists_a_poll_could_not_read_have_null_totals(dsn: str, queue: JobQueue) -> None:
    """pgq-top's own table with dead jobs, polled while another session holds an ACCESS EXCLUSIVE
    lock: the counts and both lists wait past the lock_timeout; their totals are null, not 0."""
    queue.enqueue("mail", [{"n": i} for i in range(3)], max_attempts=1)
    for job in queue.claim("mail", limit=3, lease=30):
        queue.fail(job, "boom")
    with pgq_monitor(dsn, read_only=True, lock_timeout_ms=200) as monitor:
        before = monitor.collect()
        with psycopg.connect(dsn) as blocker:
            blocker.execute("LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE")
            during = monitor.collect()
            blocker.rollback()
    assert before.dead.total == 3 and before.stuck.total == 0  # a check against a made-up null
    assert {"queues", "leases", "dead"} <= set(during.errors), during.errors
    doc = during.to_dict()
    assert (doc["dead"]["total"], doc["stuck"]["total"], doc["leases"]["total"]) == (None, None, None)


async def test_the_panels_title_says_question_mark_before_the_list_lands(empty_dsn: str) -> None:
    from pgq_tui.tui.app import PgqTopApp

    dsn = _stock(empty_dsn)
    slow_scans(dsn)  # a scan within 1 ms would land the lists before the screen shows them
    (target,) = find_queues(dsn)
    monitor = Monitor(dsn, target.model, read_only=True, scan_pages=0, count_budget_ms=1)
    app = PgqTopApp(monitor, target=target.label, interval=1.0, read_only=True)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await tui_support.settle(pilot, app)
            for panel, title in (("stuck", "2 Stuck jobs"), ("leases", "3 Leases")):
                shown = app.panel(panel).border_title
                shown = getattr(shown, "plain", str(shown))
                assert shown == f"{title} (?)", shown
    finally:
        monitor.close()
