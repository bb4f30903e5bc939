"""Confirmation for every write: what changes, how many rows, the warning and the exact SQL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from pgq_tui.tui.format import safe

if TYPE_CHECKING:
    from pgq_tui.actions import Plan

MAX_TARGETS_SHOWN = 20


def plan_renderable(plan: Plan, *, second: bool = False) -> Group:
    """Pure: a Plan as rich renderables. Descriptions and warnings may quote untrusted names."""
    parts: list[Any] = []
    if second:
        parts.append(Text("SECOND CONFIRMATION", style="bold reverse red"))
        parts.append(safe(plan.warning or "This may cause a duplicate run.", style="bold red"))
        parts.append(Text("\nPress y to go ahead anyway, n or esc to abort.", style="bold"))
        return Group(*parts)
    parts.append(safe(plan.description))
    targets = list(plan.targets or ())
    shown = ", ".join(str(t) for t in targets[:MAX_TARGETS_SHOWN])
    more = f" … and {len(targets) - MAX_TARGETS_SHOWN} more" if len(targets) > MAX_TARGETS_SHOWN else ""
    noun = {
        "cancel": "session",
        "terminate": "session",
        "tune": "table",
        "pause": "queue",
        "resume": "queue",
    }.get(plan.action, "job")
    parts.append(
        Text(f"\nwill change at most {plan.count} {noun}{'' if plan.count == 1 else 's'}", style="bold")
    )
    if targets:
        parts.append(safe(f"targets: {shown}{more}", style="dim"))
    if plan.warning:
        parts.append(Text(""))
        parts.append(safe(plan.warning, style="bold yellow"))
    parts.append(Text("\nSQL that will run:", style="bold"))
    parts.append(Syntax(str(plan.sql), "sql", word_wrap=True, theme="ansi_dark", background_color="default"))
    style = "bold red" if plan.destructive else "bold"
    parts.append(Text("\ny/enter: confirm   n/esc: abort", style=style))
    return Group(*parts)


class ConfirmScreen(ModalScreen[bool]):
    """Dismisses with True only on an explicit y (or enter on the first confirmation)."""

    BINDINGS = [
        Binding("y", "answer(True)", "Confirm"),
        Binding("enter", "enter", "Confirm", show=False),
        Binding("n,escape", "answer(False)", "Abort"),
    ]

    def __init__(self, plan: Plan, *, second: bool = False) -> None:
        super().__init__()
        self.plan = plan
        self.second = second

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="confirm-box", classes="-second" if self.second else "") as box:
            box.border_title = str(self.plan.title)
            box.border_subtitle = "y confirm · n abort"
            yield Static(plan_renderable(self.plan, second=self.second), id="confirm-body")

    def on_mount(self) -> None:
        self.query_one("#confirm-box").focus()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    def action_enter(self) -> None:
        # The second confirmation must be a deliberate `y`: enter is what a hurried hand presses twice.
        if not self.second:
            self.dismiss(True)
