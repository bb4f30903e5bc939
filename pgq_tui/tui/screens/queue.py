"""Queue detail: every figure of one queue with how it was obtained (exact, stale with its age, or a
lower bound) and the background count's state. Rendered from the Snapshot: no database round trip."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from pgq_tui.monitor.health import fmt_figure
from pgq_tui.monitor.provenance import count_how, queue_provenance
from pgq_tui.monitor.snapshot import QueueStats, Snapshot
from pgq_tui.tui.format import visible
from pgq_tui.tui.screens import QUIT
from pgq_tui.tui.widgets import latency_cells


class QueueScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,enter,v", "app.pop_screen", "Close"), QUIT]

    def __init__(self, snap: Snapshot, queue: QueueStats) -> None:
        super().__init__()
        self._snap = snap
        self._queue = queue

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail-box") as box:
            box.border_title = f"queue {visible(self._queue.queue)}: how each figure was obtained"
            box.border_subtitle = "esc to close · figures from the last poll"
            yield Static(queue_provenance(self._snap, self._queue), id="detail-body")
            if self._queue.extra:
                yield Static(extra_states(self._snap, self._queue), id="detail-extra")
            if self._snap.latency is not None and not self._snap.latency.unsupported:
                yield Static(latency_cells.provenance(self._snap, self._queue.queue), id="detail-latency")

    def on_mount(self) -> None:
        self.query_one("#detail-box").focus()


def extra_states(snap: Snapshot, queue: QueueStats) -> Group:
    """The dialect's extra states (cancelled, pending...), each with how it was counted."""
    counts = snap.counts
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column()
    for label, n in queue.extra.items():
        how = count_how(queue.figures.get(label), counts.cap if counts else 0, snap.server.now)
        grid.add_row(Text(label), fmt_figure(n, queue.accuracy(label)), Text(how, style="dim"))
    return Group(Text(""), Text(f"{snap.kind}'s own states beside those", style="dim"), grid)
