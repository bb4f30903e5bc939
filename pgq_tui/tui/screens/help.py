"""Help, generated from the active bindings (so it lists exactly the keys that work right now)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from pgq_tui.tui.keys import SECTIONS, section
from pgq_tui.tui.screens import QUIT


def key_label(binding: Binding) -> str:
    if binding.key_display:
        return binding.key_display
    return binding.key.replace("question_mark", "?").replace("slash", "/")


def _grouped(bindings: Iterable[Binding]) -> dict[str, dict[str, list[str]]]:
    """section -> description -> keys, sections in their fixed order, keys shortest first."""
    groups: dict[str, dict[str, list[str]]] = {}
    for b in bindings:
        title = section(b)
        if not b.description or title is None:
            continue
        keys = groups.setdefault(title, {}).setdefault(b.description, [])
        if key_label(b) not in keys:
            keys.append(key_label(b))
    order = sorted(groups, key=lambda t: SECTIONS.index(t) if t in SECTIONS else len(SECTIONS))
    return {t: {d: sorted(k, key=len) for d, k in groups[t].items()} for t in order}


def keys_markdown(
    bindings: Iterable[Binding],
    extra: Iterable[tuple[str, str]] = (),
    screens: Iterable[tuple[str, Iterable[Binding]]] = (),
) -> str:
    """The same key list as a Markdown table, for docs/dashboard.md (generated, so it cannot drift).
    `screens`: a section per screen with keys of its own (its title, its bindings), after the rest."""
    lines = ["| keys | what they do |", "| --- | --- |"]
    for title, rows in _grouped(bindings).items():
        lines.append(f"| **{title}** | |")
        lines += [f"| {' '.join(f'`{k}`' for k in keys)} | {d} |" for d, keys in rows.items()]
    lines.append("| **Tables** | |")
    lines += [f"| {' '.join(f'`{k}`' for k in keys.split())} | {d} |" for keys, d in extra]
    for title, own in screens:
        lines.append(f"| **{title}** | |")
        merged: dict[str, list[str]] = {}
        for b in own:
            if b.description and key_label(b) not in merged.setdefault(b.description, []):
                merged[b.description].append(key_label(b))
        lines += [f"| {' '.join(f'`{k}`' for k in keys)} | {d} |" for d, keys in merged.items()]
    return "\n".join(lines)


def help_table(bindings: Iterable[Binding], extra: Iterable[tuple[str, str]] = ()) -> Table:
    """One row per binding, grouped by section in a fixed order; multi-key bindings merged."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold cyan", justify="right", no_wrap=True)
    table.add_column()
    for title, rows in _grouped(bindings).items():
        table.add_row(Text(""), Text(""))
        table.add_row(Text(""), Text(title, style="bold underline"))
        for description, keys in rows.items():
            table.add_row(Text(" ".join(keys)), Text(description))
    if extra:
        table.add_row(Text(""), Text(""))
        table.add_row(Text(""), Text("Tables", style="bold underline"))
        for key_text, description in extra:
            table.add_row(Text(key_text), Text(description))
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,question_mark", "app.pop_screen", "Close"),
        QUIT,
    ]

    def __init__(self, bindings: list[Binding], extra: list[tuple[str, str]], note: str = "") -> None:
        super().__init__()
        self._bindings_shown = bindings
        self._extra = extra
        self._note = note

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box") as box:
            box.border_title = "pgq-top keys"
            box.border_subtitle = "esc to close"
            yield Static(help_table(self._bindings_shown, self._extra), id="help-body")
            if self._note:
                yield Static(Text(self._note, style="dim"), id="help-note")

    def on_mount(self) -> None:
        self.query_one("#help-box").focus()
