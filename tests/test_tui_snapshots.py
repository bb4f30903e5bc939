"""SVG snapshots of the main layouts on a fixed Snapshot: no database, pinned clock, no polling.

Update after an intended change with: pytest tests/test_tui_snapshots.py --snapshot-update
"""

from __future__ import annotations

from test_tui_sample import make_snapshot

from pgq_tui.tui.app import PgqTopApp


def make_app(**kwargs: object) -> PgqTopApp:
    snap = make_snapshot()
    return PgqTopApp(lambda: snap, clock=lambda: 0.0, poll=False, initial=snap, **kwargs)  # type: ignore[arg-type]


def test_layout_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(), terminal_size=(80, 24))


def test_layout_160x48(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(), terminal_size=(160, 48))


def test_sessions_panel_at_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(), terminal_size=(80, 24), press=["5"])


def test_help_screen(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(), terminal_size=(100, 40), press=["question_mark"])
