"""The advisor (key A): recommended autovacuum settings with the reason for each, computed from the
measured rates (monitor/advice.py). `a` applies the per-table part through the usual confirmation;
the ALTER SYSTEM lines are for the DBA and only shown."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from pgq_tui.monitor.advice import Advice
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.render.advice import render
from pgq_tui.tui.screens import QUIT


class AdviceScreen(ModalScreen[bool]):
    """Dismisses with True when the user asks to apply the per-table settings."""

    BINDINGS = [
        Binding("a", "apply", "Apply per-table settings"),
        Binding("escape", "close", "Close"),
        QUIT,
    ]

    def __init__(self, advice: Advice, snap: Snapshot, *, can_apply: bool) -> None:
        super().__init__()
        self.advice = advice
        self.snap = snap
        self.can_apply = can_apply and advice.table_sql is not None

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail-box") as box:
            box.border_title = f"Advisor · {self.advice.table}"
            if self.can_apply:
                box.border_subtitle = "a apply per-table settings (confirmed) · esc close"
            elif self.advice.table_sql is None:
                box.border_subtitle = "nothing to apply per table · esc close"
            else:
                box.border_subtitle = "read-only: apply disabled · esc close"
            yield Static(render(self.advice, self.snap), id="advice-body")

    def on_mount(self) -> None:
        self.query_one("#detail-box").focus()

    def action_apply(self) -> None:
        if self.can_apply:
            self.dismiss(True)
        else:
            self.notify("nothing to apply here (read-only, or no per-table change)", severity="warning")

    def action_close(self) -> None:
        self.dismiss(False)
