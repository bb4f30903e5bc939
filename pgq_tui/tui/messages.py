"""Typed messages that workers post to the app: the only way data reaches the UI thread."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

from pgq_tui.monitor.snapshot import Snapshot

if TYPE_CHECKING:
    from pgq_tui.actions import ActionOutcome, Plan
    from pgq_tui.demo.controller import DemoStatus


class SnapshotReady(Message):
    """A poll finished; widgets render from this Snapshot only."""

    def __init__(self, snapshot: Snapshot, demo_status: DemoStatus | None = None) -> None:
        super().__init__()
        self.snapshot = snapshot
        self.demo_status = demo_status


class CollectFailed(Message):
    """A poll could not reach the server: show the banner, keep the last data (stale), retry."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class PlanReady(Message):
    """An action was planned (in a worker); the app asks for confirmation."""

    def __init__(self, plan: Plan, panel_id: str | None = None) -> None:
        super().__init__()
        self.plan = plan
        self.panel_id = panel_id  # whose marks to clear once it ran


class ActionFinished(Message):
    """An action ran; `outcome` is an actions.ActionOutcome (never an exception)."""

    def __init__(self, outcome: ActionOutcome, panel_id: str | None = None) -> None:
        super().__init__()
        self.outcome = outcome
        self.panel_id = panel_id


class DemoDone(Message):
    """A demo control ran; `text` says what happened."""

    def __init__(self, text: str, error: bool = False) -> None:
        super().__init__()
        self.text = text
        self.error = error
