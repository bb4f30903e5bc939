"""Several queues in one database: the user picks which one to open (detection never guesses)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option


class QueuePicker(App[int]):
    """Returns the index of the chosen queue, or None when the user quits."""

    TITLE = "pgq-top"
    BINDINGS = [Binding("q", "quit", "Quit"), Binding("escape", "quit", "Quit", show=False)]
    CSS = "OptionList { height: auto; max-height: 80%; border: round $accent; } Static { padding: 1 1; }"

    def __init__(self, labels: Sequence[str], evidence: Sequence[str]) -> None:
        super().__init__()
        self.labels = list(labels)
        self.evidence = list(evidence)

    def compose(self) -> ComposeResult:
        yield Static(Text(f"{len(self.labels)} job queues in this database: pick one (enter), or q to quit"))
        options = [
            Option(Text(label) + Text(f"\n  {why}", style="dim"), id=str(i))
            for i, (label, why) in enumerate(zip(self.labels, self.evidence, strict=True))
        ]
        yield OptionList(*options)
        yield Footer()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.exit(int(event.option.id or 0))


def pick(labels: Sequence[str], evidence: Sequence[str]) -> int | None:
    return QueuePicker(labels, evidence).run()
