"""Repaint only what changed: an unchanged poll sends nothing, a ticking lease repaints its cells only,
and what is on screen is still exactly what the Snapshot says."""

from __future__ import annotations

import dataclasses
import doctest
from datetime import timedelta

from test_tui_offline import app_on
from test_tui_sample import make_snapshot

from pgq_tui.monitor.snapshot import LeaseList
from pgq_tui.tui import quiet
from pgq_tui.tui.messages import SnapshotReady
from pgq_tui.tui.widgets.chart import ThroughputChart


def test_doctests() -> None:
    result = doctest.testmod(quiet)
    assert result.attempted > 0 and result.failed == 0


def tick(snap, seconds: float):  # type: ignore[no-untyped-def]
    """The same queue `seconds` later: every running lease has that much less time left."""
    rows = tuple(dataclasses.replace(r, seconds_left=r.seconds_left - seconds) for r in snap.leases.rows)
    return dataclasses.replace(snap, leases=LeaseList(rows, snap.leases.total))


def screen_lines(widget) -> list[str]:  # type: ignore[no-untyped-def]
    return [widget.render_line(y).text for y in range(widget.size.height)]


async def test_only_changed_cells_are_repainted() -> None:
    first = make_snapshot()
    app = app_on([first], poll=False)
    async with app.run_test(size=(160, 48)) as pilot:
        app.post_message(SnapshotReady(first))
        await pilot.pause(0.2)
        leases = app.panel("leases")
        clears, refreshes = [], []
        original_clear, original_refresh = leases.clear, leases.refresh
        leases.clear = lambda *a, **k: clears.append(1) or original_clear(*a, **k)
        leases.refresh = lambda *a, **k: refreshes.append(a or k) or original_refresh(*a, **k)

        app.post_message(SnapshotReady(first))  # the same snapshot again: nothing to repaint
        await pilot.pause(0.2)
        assert (clears, refreshes) == ([], [])

        later = tick(first, 3.0)  # leases tick: same rows, one column changes
        app.post_message(SnapshotReady(later))
        await pilot.pause(0.2)
        assert clears == [] and refreshes and all(r for r in refreshes)  # regions only, never all
        text = "\n".join(screen_lines(leases))
        assert "17s" in text and "20s" not in text  # 20 s left three seconds ago: now 17 s
        assert [leases.get_row_index(str(r.id)) for r in later.leases.rows[:3]] == [0, 1, 2]

        fewer = dataclasses.replace(later, leases=LeaseList(later.leases.rows[:5], 5))
        app.post_message(SnapshotReady(fewer))  # rows left: the table is refilled
        await pilot.pause(0.2)
        assert clears == [1] and leases.row_count == 5


def later_by(snap, seconds: float):  # type: ignore[no-untyped-def]
    """The same snapshot, taken `seconds` later by the server's clock."""
    server = dataclasses.replace(snap.server, now=snap.server.now + timedelta(seconds=seconds))
    return dataclasses.replace(snap, server=server)


async def test_the_chart_keeps_its_axis_and_repaints_only_a_new_picture() -> None:
    """Steady rates over a full 1-minute window: each poll shifts the samples by a fraction of a
    pixel, so the chart is not repainted, and its axis labels stay -60s ... now (they were the
    samples' own span, relabelled at every poll)."""
    first = make_snapshot()
    app = app_on([first], poll=False)
    async with app.run_test(size=(160, 48)) as pilot:
        chart = app.query_one(ThroughputChart)
        chart.cycle_window(0)  # 1 min
        for i in range(40):  # polls 1.9 s apart (not a divisor of the axis): past the window
            app.post_message(SnapshotReady(later_by(first, 1.9 * i)))
            await pilot.pause(0.02)
        await pilot.pause(0.2)
        lines = screen_lines(chart)
        assert any("-60s" in line and "now" in line for line in lines), lines
        refreshes: list[object] = []
        original = chart.refresh
        chart.refresh = lambda *a, **k: refreshes.append(1) or original(*a, **k)  # type: ignore[method-assign]
        for i in range(40, 44):
            app.post_message(SnapshotReady(later_by(first, 1.9 * i)))
            await pilot.pause(0.05)
        assert len(refreshes) <= 1  # at most a pixel's worth of change over four polls
        assert screen_lines(chart)[-2:] == lines[-2:]  # the axis and its labels
