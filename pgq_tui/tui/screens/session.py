"""Session detail: every field the Snapshot has about a session, xmin holder or blocker, e.g. the full
query of a blocker before you press K. Rendered from the Snapshot: no database round trip."""

from __future__ import annotations

import dataclasses
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from pgq_tui.tui.format import fmt_age, safe
from pgq_tui.tui.screens import QUIT


def fields_renderable(obj: Any) -> Group:
    """Pure: a frozen dataclass as a two-column grid; every value through `safe` (names, queries)."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        shown = fmt_age(value) if f.name.endswith(("_s", "_wait_s")) and isinstance(value, float) else value
        grid.add_row(f.name, safe(shown))
    return Group(grid)


class SessionScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,enter", "app.pop_screen", "Close"),
        QUIT,
    ]

    def __init__(self, title: str, obj: Any) -> None:
        super().__init__()
        self._title = title
        self._obj = obj

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail-box") as box:
            box.border_title = self._title
            box.border_subtitle = "esc to close · C cancel / K terminate from the panel"
            yield Static(fields_renderable(self._obj), id="detail-body")
            yield Static(Text("read from the last poll", style="dim"))

    def on_mount(self) -> None:
        self.query_one("#detail-box").focus()
