"""Replay's go-to: one line of input, a time (ISO 8601 or 03:12); escape cancels."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class GotoScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    GotoScreen { align: center middle; }
    GotoScreen > Vertical { width: 60; height: auto; border: round $accent; background: $surface; }
    """

    def __init__(self, current: str) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"go to a time (now at {self.current}); e.g. 03:12 or 2026-12-01T03:12:00Z")
            yield Input(placeholder="time", id="when")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
