"""The why screen (`y`): every diagnosis chain in full, from the symptom to the root cause, with the
evidence behind each link and the fix as a key and as SQL. Rendered from the chains the app computed
over its Snapshot history: no database round trip. Untrusted text (application names, queries) is
rich Text through `safe`, never markup."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from pgq_tui.diagnosis import Chain, one_line
from pgq_tui.tui.format import LEVEL_MARK, LEVEL_STYLE, safe
from pgq_tui.tui.screens import QUIT


def why_renderable(chains: Sequence[Chain], hide_keys: Collection[str] = ()) -> Group:
    """Pure: the chains as rich renderables; each link's words hang beside its role. A fix key in
    `hide_keys` (a write key, with --read-only) is not offered; its SQL still is, to run elsewhere."""
    if not chains:
        return Group(Text("nothing wrong: no chain has held long enough to show", style="green"))
    parts: list[Text | Table] = []
    for n, chain in enumerate(chains, 1):
        if n > 1:
            parts.append(Text(""))
        head = Text(f"{n}. {LEVEL_MARK[chain.level]} ", style=LEVEL_STYLE[chain.level])
        head.append_text(safe(one_line(chain, hide_keys=hide_keys), style=LEVEL_STYLE[chain.level]))
        parts.append(head)
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="bold", no_wrap=True, width=8)
        grid.add_column()
        for i, f in enumerate(chain.links):
            role = "symptom" if i == 0 and len(chain.links) > 1 else "root" if f is chain.root else "because"
            grid.add_row(role, safe(f.text))
            for e in f.evidence:
                grid.add_row("", Text("- ", style="dim").append_text(safe(e, style="dim")))
        fix = chain.fix
        if fix is not None:
            what = safe(fix.what, style="green")
            if fix.key and fix.key not in hide_keys:
                what.append(f"  (key {fix.key} on the dashboard)", style="bold")
            grid.add_row(Text("fix", style="bold green"), what)
            for code in (fix.sql, fix.command):
                if code:
                    grid.add_row("", safe(code, style="cyan"))
        parts.append(grid)
    return Group(*parts)


class WhyScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,y,enter", "app.pop_screen", "Close"), QUIT]

    def __init__(self, chains: Sequence[Chain], hide_keys: Collection[str] = ()) -> None:
        super().__init__()
        self._chains = tuple(chains)
        self._hide_keys = frozenset(hide_keys)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail-box") as box:
            box.border_title = "why: symptom ← cause ← root · fix"
            box.border_subtitle = (
                "esc to close · q quits · read-only: no write key, the SQL runs elsewhere"
                if self._hide_keys
                else "esc to close · the keys work on the dashboard (K in the sessions panel)"
            )
            yield Static(why_renderable(self._chains, self._hide_keys), id="why-body")

    def on_mount(self) -> None:
        self.query_one("#detail-box").focus()
