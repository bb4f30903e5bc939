"""Autovacuum pacing, claim-cost verdict and advisor arithmetic as pure functions, on recorded inputs:
tests/data/bloat_counters.json (pg_stat_user_tables once a second while 2 clients claimed and deleted)
and the collapse measured in PERF_NOTES (5.5k -> 1.3k claims/s, 370k dead tuples, 716 buffers/claim)."""

from __future__ import annotations

import doctest
import json
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from pgq_tui.monitor import pacing as pc
from pgq_tui.monitor.bloat import ProbePoint
from pgq_tui.monitor.bloatwatch import peak_budget
from pgq_tui.monitor.probe import buffers_per_dead, check_probe_text, cost_verdict, parse_explain
from pgq_tui.monitor.snapshot import XminHolder

DATA = json.loads((Path(__file__).parent / "data" / "bloat_counters.json").read_text())
SAMPLES = [pc.Counters(*row) for row in DATA["rows"]]


def test_doctests() -> None:
    from pgq_tui.monitor import figures

    for module in (pc, figures):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0


def test_dead_rate_from_recorded_counters() -> None:
    rate = pc.dead_rate(SAMPLES, 10)
    # deletes only (no updates in that run): the last sample against the one 10 s before it
    last, first = SAMPLES[-1], SAMPLES[-11]
    assert rate == pytest.approx((last.deleted - first.deleted) / (last.t - first.t))
    assert 500 < rate < 1000


def test_dead_rate_survives_a_vacuum_in_the_window() -> None:
    """n_dead_tup drops to ~0 at the vacuum (sample 21), the monotonic counters do not."""
    window = SAMPLES[15:25]
    assert window[0].vacuums < window[-1].vacuums
    assert pc.dead_rate(window, 8) > 500


def test_vacuum_duration_from_total_vacuum_time() -> None:
    assert pc.vacuum_duration(SAMPLES) == pytest.approx(0.037)
    assert pc.vacuum_duration(SAMPLES[1:20]) is None  # no vacuum finished while we watched


def test_predicted_peak_matches_the_recorded_cycle() -> None:
    """Threshold 50 + 0.2 x 60k, naptime 5 s: the recorded peak before the vacuum was 11.1k dead."""
    rate = pc.dead_rate(SAMPLES[:21], 10)
    peak = pc.predicted_peak(12_050, rate, 5, 0.037)
    observed = max(s.dead for s in SAMPLES[:21])
    assert observed <= peak <= 1.5 * observed
    verdict = pc.pacing(rate=rate, threshold=12_050, naptime_s=5, vacuum_s=0.037)
    assert verdict.limiter == "threshold" and verdict.keeps_up
    # the same table under the stock naptime: the threshold fills in ~20 s, the launcher looks every 60
    verdict = pc.pacing(rate=rate * 4, threshold=12_050, naptime_s=60, vacuum_s=0.037)
    assert verdict.limiter == "naptime"
    assert "naptime is the limiter" in verdict.message and "autovacuum_naptime" in verdict.message


def test_perf_notes_collapse() -> None:
    """PERF_NOTES: 200k jobs, 4 clients, stock autovacuum: 370k dead tuples, no autovacuum fired."""
    rate = 5000.0
    stock = pc.pacing(rate=rate, threshold=50 + 0.2 * 200_000, naptime_s=60, vacuum_s=2.0, peak_budget=9000)
    assert stock.limiter == "naptime" and stock.level == "crit"
    assert 300_000 <= stock.predicted_peak <= 400_000
    # scale factor 0, threshold 20k, naptime 5 s: "dead tuples under 90k" was measured
    tuned = pc.predicted_peak(20_000, rate, 5, 2.0)
    assert tuned < 90_000
    # per-table settings alone (naptime still 60 s) cannot bring the peak down: the naptime limits
    assert pc.predicted_peak(20_000, rate, 60, 2.0) > 300_000


def test_cannot_keep_up_and_no_worker() -> None:
    slow = pc.pacing(rate=2000, threshold=10_000, naptime_s=5, vacuum_s=12)
    assert slow.limiter == "cannot keep up" and slow.keeps_up is False and slow.level == "crit"
    busy = pc.pacing(rate=2000, threshold=10_000, naptime_s=5, vacuum_s=1, max_workers=3, workers_elsewhere=3)
    assert busy.limiter == "workers" and "busy on other tables" in busy.message
    assert pc.pacing(rate=0, threshold=10_000, naptime_s=5, vacuum_s=1).limiter == "idle"
    assert pc.pacing(rate=10, threshold=1, naptime_s=5, vacuum_s=1, enabled=False).limiter == "disabled"


def test_xmin_block_names_the_oldest_holder_older_than_the_vacuum() -> None:
    old = XminHolder("backend", "111", 900, 600.0, "alice@db psql idle in transaction")
    young = XminHolder("backend", "222", 10, 5.0, "bob@db app active")
    ours = XminHolder("backend", "333", 950, 700.0, "pgq-top", is_pgq_top=True)
    block = pc.xmin_block(
        dead_before=8000,
        dead_after=8000,
        vacuumed_at_epoch=990.0,
        now_epoch=1000.0,
        holders=[young, ours, old],
    )
    assert block is not None and block.pid == 111
    assert "pid 111" in block.message and "removed 0 of 8.0k" in block.message
    # a vacuum that removed most dead tuples is not blocked
    assert pc.xmin_block(dead_before=8000, dead_after=300, vacuumed_at_epoch=990.0, now_epoch=1000.0,
                         holders=[old]) is None  # fmt: skip


def test_xmin_block_needs_a_vacuum_after_the_holder_and_a_holder_that_can_hold_the_table() -> None:
    """The evidence for "vacuum can't remove": a vacuum between two polls (dead_before known) that
    left the tuples, and a holder of this table whose hold began before that vacuum."""
    mine = XminHolder("backend", "111", 900, 600.0, "alice@db psql idle in transaction", scope="database")
    other = XminHolder(
        "backend", "222", 990, 3600.0, "bob@crm psql idle in transaction", scope="other database"
    )
    logical = XminHolder("replication slot", "cdc", 999, None, "logical inactive", scope="catalog")
    physical = XminHolder("replication slot", "standby", 950, None, "physical active", scope="cluster")
    ran = {"dead_after": 8000, "vacuumed_at_epoch": 990.0, "now_epoch": 1000.0}

    def who(before: int | None, holders: list[XminHolder], seen: list[XminHolder] = []) -> str | None:  # noqa: B006
        block = pc.xmin_block(dead_before=before, holders=holders, before=seen, **ran)  # type: ignore[arg-type]
        return block.holder if block is not None else None

    assert who(8000, [mine, other, logical]) == "111"  # the bystanders are older, and not named
    assert who(8000, [other, logical], [other, logical]) is None
    assert who(None, [mine]) is None  # the first poll: only the last vacuum ever, no evidence
    assert who(8000, [replace(mine, age_s=5.0)]) is None  # began after the vacuum: not holding it
    assert who(8000, [physical]) is None  # an undated slot not seen before the vacuum
    assert who(8000, [physical], [physical]) == "standby"  # a standby's feedback holds every database
    assert who(8000, [replace(logical, scope=None, detail="logical inactive catalog_xmin age 9")]) is None


def _row(vacuumed_at_epoch: float, now_epoch: float) -> dict[str, object]:
    """autovacuum_pacing.sql's row."""
    return {
        "naptime_s": 60.0, "max_workers": 3, "workers_elsewhere": 0, "av_cost_limit": -1,
        "vacuum_cost_limit": 200, "cost_delay_ms": 2.0, "idle_tx_timeout_ms": 0.0, "reloptions": [],
        "vacuum_time_ms": None, "vacuumed_at_epoch": vacuumed_at_epoch, "vacuumed_at": None,
        "now_epoch": now_epoch,
    }  # fmt: skip


def test_bloatwatch_blames_no_one_on_the_first_poll() -> None:
    """The issue's first poll: 5,000 dead tuples of ordinary churn, the table's last vacuum an hour
    ago, an old holder in this database: no vacuum was seen leaving them, so there is no block. A
    vacuum between two polls that leaves them is the evidence, and names the holder."""
    from test_tui_sample import NOW, make_snapshot

    from pgq_tui.monitor.bloatwatch import BloatWatch
    from pgq_tui.monitor.snapshot import Sessions

    table = replace(make_snapshot().table, dead_tuples=5000, vacuum_count=3, autovacuum_count=0, vacuum=None)
    holder = XminHolder("backend", "111", 900, 7200.0, "alice@db psql idle in transaction", scope="database")
    slot = XminHolder(
        "replication slot", "standby", 850, None, "physical inactive xmin age 850", scope="cluster"
    )
    sessions = Sessions((), (holder, slot), (), 5)  # both older than the last vacuum ever
    watch = BloatWatch(None, probe_interval_s=0)
    first = watch.update(_row(1000.0, 4600.0), table, sessions, NOW, None)
    assert first.xmin_block is None
    same = watch.update(_row(1000.0, 4602.0), table, sessions, NOW, None)
    assert same.xmin_block is None  # no vacuum since
    vacuumed = replace(table, vacuum_count=4)
    later = watch.update(_row(4603.0, 4604.0), vacuumed, sessions, NOW, None)
    assert later.xmin_block is not None and later.xmin_block.pid == 111


def _points(buffers: list[int], dead: list[int]) -> list[ProbePoint]:
    at = datetime(2026, 11, 30, tzinfo=timezone.utc)
    return [
        ProbePoint(at + timedelta(seconds=i), b, 0, 0.1, True, d)
        for i, (b, d) in enumerate(zip(buffers, dead, strict=True))
    ]


def test_cost_verdict_fires_at_a_multiple_of_the_floor() -> None:
    # PERF_NOTES: 6 buffers per claim on a fresh table, 716 at 370k dead tuples
    growth = [6, 6, 7, 9, 14, 26, 48, 90, 180, 360, 716]
    dead = [0, 1000, 4000, 10_000, 25_000, 55_000, 100_000, 150_000, 220_000, 300_000, 370_000]
    levels = [cost_verdict(_points(growth[: i + 1], dead[: i + 1]))[0] for i in range(len(growth))]
    assert levels[:5] == ["ok"] * 5
    assert levels[6] == "warn"  # 48 buffers = 8x the floor of 6
    assert levels[-1] == "crit"
    slope = buffers_per_dead(_points(growth, dead))
    assert slope is not None and 0.001 < slope < 0.003
    assert peak_budget(6, slope) == pytest.approx(18 / slope)


def test_small_tables_jitter_is_not_a_signal() -> None:
    assert cost_verdict(_points([2, 3, 2, 9], [0, 0, 0, 0]))[0] == "ok"


def test_probe_text_must_not_lock_or_write() -> None:
    check_probe_text("SELECT id FROM jobs WHERE status = 'pending' ORDER BY run_at LIMIT 1")
    for bad in (
        "SELECT id FROM jobs LIMIT 1 FOR UPDATE SKIP LOCKED",
        "SELECT id FROM jobs LIMIT 1 FOR NO KEY UPDATE",
        "WITH d AS (DELETE FROM jobs RETURNING id) SELECT id FROM d",
        "UPDATE jobs SET status = 'running'",
    ):
        with pytest.raises(ValueError):
            check_probe_text(bad)


def test_parse_explain_counts_hit_and_read() -> None:
    doc = [
        {
            "Plan": {"Shared Hit Blocks": 700, "Shared Read Blocks": 16, "Actual Rows": 0},
            "Execution Time": 2.5,
        }
    ]
    assert parse_explain(doc) == (716, 16, 2.5, False)
