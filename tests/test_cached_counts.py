"""The framework's own counts (monitor/cached.py) for a count left to the background's scans (no
index serves it on a large table): shown until a newer background count lands, never over a newer
one, with a failed background try said beside whose count it is; a one-shot waits for the background's.
Pure: rows in, figures out (tests/frameworks/test_pgboss_cached.py runs pg-boss's own monitor)."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone

from pgq_tui.dialects.contract import Match, QueueModel, Statement
from pgq_tui.monitor import settle
from pgq_tui.monitor.cached import SOURCE, Cached
from pgq_tui.monitor.counting import BackgroundCount, queue_stats
from pgq_tui.monitor.snapshot import Figure

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=timezone.utc)
KEPT_BY = "the framework's own count"
SCAN = Statement.of("dead_scan", "", ("queue", "dead")).scan()
MODEL = QueueModel(Match("k", "s", "t"), "K", "", (), (Statement.of("c", "", ("queue", "ready")), SCAN))
ROWS = [{"queue": "q", "ready": 3}]


def dead(bg: BackgroundCount | None, cached: Cached | None) -> tuple[int | None, Figure]:
    (q,) = queue_stats(ROWS, MODEL, 11, NOW, bg, deferred=frozenset({"dead"}), cached=cached)
    return q.dead, q.figures["dead"]


def background(as_of: datetime, failed: str | None = None) -> BackgroundCount:
    return BackgroundCount(
        as_of,
        1.0,
        frozenset({"dead"}),
        {("q", "dead"): 7},
        0,
        scanned=frozenset({"dead"}),
        failed={"dead": failed} if failed else {},
    )


def test_a_deferred_count_shows_the_framework_s_own_until_a_newer_background_count() -> None:
    counted = Cached({("q", "dead"): 5}, {"q": NOW - timedelta(seconds=30)}, KEPT_BY)
    value, figure = dead(None, counted)  # no scan has landed: the framework's, not unknown
    assert (value, figure.accuracy, figure.source, figure.as_of) == (
        5,
        "stale",
        SOURCE,
        NOW - timedelta(seconds=30),
    )
    assert figure.reason == KEPT_BY
    value, figure = dead(background(NOW - timedelta(seconds=10)), counted)  # the scan is newer
    assert (value, figure.source) == (7, "background scan")
    value, figure = dead(background(NOW - timedelta(seconds=60)), counted)  # the framework's is newer
    assert (value, figure.source) == (5, SOURCE)
    assert dead(None, None)[1].accuracy == "unknown"  # neither: unknown, never 0


def test_a_failed_scan_is_said_beside_whose_count_is_shown() -> None:
    counted = Cached({("q", "dead"): 5}, {"q": NOW}, KEPT_BY)
    failed = background(NOW - timedelta(seconds=60), "background count failed: statement timeout")
    value, figure = dead(failed, counted)
    assert (value, figure.source) == (5, SOURCE)
    assert figure.reason == f"background count failed: statement timeout; {KEPT_BY}"


def test_a_one_shot_waits_for_the_background_count_over_the_framework_s() -> None:
    """seconds fresher is worth the wait (past it, the framework's count stays: test_pgboss_cached)"""
    assert settle.owed(Figure("stale", NOW, SOURCE, reason=KEPT_BY))
    assert not settle.owed(Figure("stale", NOW, "background"))


def test_check_says_how_old_a_stale_dead_count_is() -> None:
    """`check` on a stale dead count (the framework's own, 45 s old) says so, not just the number."""
    from test_tui_sample import NOW as SAMPLE_NOW
    from test_tui_sample import make_snapshot

    from pgq_tui.check.rules import measures

    snap = make_snapshot()
    stale = Figure("stale", SAMPLE_NOW - timedelta(seconds=45), SOURCE, reason=KEPT_BY)
    queues = tuple(
        dataclasses.replace(q, figures={**q.figures, "dead": stale}) if q.queue == "webhooks" else q
        for q in snap.queues
    )
    dead = next(m for m in measures(dataclasses.replace(snap, queues=queues)) if m.label == "dead")
    assert dead.message == "10 dead jobs (as of 45s ago)"
    assert next(m for m in measures(snap) if m.label == "dead").message == "10 dead jobs"
