"""Queue detail: every figure of one queue with how it was obtained (exact, stale with its age, or a
lower bound) and the background count's state. Rendered from the Snapshot: no database round trip."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from pgq_tui.monitor.provenance import queue_provenance
from pgq_tui.monitor.snapshot import QueueStats, Snapshot
from pgq_tui.tui.format import visible


class QueueScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,enter,v", "app.pop_screen", "Close")]

    def __init__(self, snap: Snapshot, queue: QueueStats) -> None:
        super().__init__()
        self._snap = snap
        self._queue = queue

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail-box") as box:
            box.border_title = f"queue {visible(self._queue.queue)}: how each figure was obtained"
            box.border_subtitle = "esc to close · figures from the last poll"
            yield Static(queue_provenance(self._snap, self._queue), id="detail-body")

    def on_mount(self) -> None:
        self.query_one("#detail-box").focus()
