"""SVG snapshots of the main layouts on a fixed Snapshot: no database, pinned clock, no polling.

Update after an intended change with: pytest tests/test_tui_snapshots.py --snapshot-update
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from test_tui_sample import NOW, make_snapshot

from pgq_tui.monitor.snapshot import STALE, Figure
from pgq_tui.tui.app import PgqTopApp


def make_app(**kwargs: object) -> PgqTopApp:
    snap = make_snapshot()
    return PgqTopApp(lambda: snap, clock=lambda: 0.0, poll=False, initial=snap, **kwargs)  # type: ignore[arg-type]


def make_extras_app() -> PgqTopApp:
    """The same queues as a framework with two extra states (River: cancelled, pending), one count
    exact as of an earlier background count."""
    base = make_snapshot()
    extras = [{"cancelled": 14, "pending": 0}, {"cancelled": 0, "pending": 3}, {"cancelled": 2, "pending": 1}]
    queues = tuple(replace(q, extra=x) for q, x in zip(base.queues, extras, strict=True))
    # the same background count as the queue's ready figure: one as_of, 4 s old
    stale = {**queues[0].figures, "cancelled": Figure(STALE, NOW - timedelta(seconds=4), "background")}
    queues = (replace(queues[0], figures=stale), *queues[1:])
    snap = replace(base, queues=queues, kind="river")
    return PgqTopApp(lambda: snap, clock=lambda: 0.0, poll=False, initial=snap)  # type: ignore[arg-type]


def test_layout_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(), terminal_size=(80, 24))


def test_layout_160x48(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(), terminal_size=(160, 48))


def test_sessions_panel_at_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(), terminal_size=(80, 24), press=["5"])


def test_help_screen(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(), terminal_size=(100, 40), press=["question_mark"])


def test_extra_states_folded_at_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    """Narrow: the extras share one column ("14c* 3p") where the sparkline was, spelled out below."""
    assert snap_compare(make_extras_app(), terminal_size=(80, 24))


def test_extra_states_in_columns_at_120x32(snap_compare) -> None:  # type: ignore[no-untyped-def]
    """Room to spare: a column per extra state after `done`, the rates and the sparkline kept."""
    assert snap_compare(make_extras_app(), terminal_size=(120, 32))
