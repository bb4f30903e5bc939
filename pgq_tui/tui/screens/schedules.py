"""The schedules screen (`S`): every periodic schedule the queue's framework keeps in the database,
with the expression in words, last run, next run, period, whether it is late and its recent jobs
(docs/schedules.md). Rendered from the last Snapshot's ScheduleReport: no database round trip.
Names and expressions are untrusted text, rendered through `safe`, never markup."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from pgq_tui.schedules.model import ScheduleReport
from pgq_tui.schedules.view import HEADERS, LATE_COLUMN, cells, notes
from pgq_tui.schedules.words import age
from pgq_tui.tui.format import safe
from pgq_tui.tui.screens import QUIT


def schedules_renderable(report: ScheduleReport | None, threshold_s: float) -> Group:
    """Pure: the report as rich renderables (a table, then how jobs are linked and zones read)."""
    if report is None:
        return Group(Text("schedules not read yet (or their read failed: see the health line)", style="dim"))
    if not report.supported:
        return Group(safe(report.reason or "this kind keeps no schedules", style="dim"))
    parts: list[Text | Table] = []
    if not report.schedules:
        parts.append(Text("no schedules in the database", style="dim"))
    else:
        table = Table(box=None, padding=(0, 1), header_style="bold")
        for h in HEADERS:
            table.add_column(h, overflow="fold")
        for s in report.schedules:
            row = cells(s, threshold_s)
            late = s.late(threshold_s)
            style = "bold red" if late else "yellow" if late is None else ""
            table.add_row(*(safe(c, style=style if i == LATE_COLUMN else "") for i, c in enumerate(row)))
        parts.append(table)
    parts.append(Text(""))
    if report.as_of is not None:
        parts.append(Text(f"read at {report.as_of.isoformat(timespec='seconds')}; late: more than "
                          f"{age(threshold_s)} past the due run (--schedule-late)", style="dim"))  # fmt: skip
    parts += [safe(line, style="dim") for line in notes(report)]
    return Group(*parts)


class SchedulesScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,S,enter", "app.pop_screen", "Close"), QUIT]

    def __init__(self, report: ScheduleReport | None, threshold_s: float) -> None:
        super().__init__()
        self._report = report
        self._threshold_s = threshold_s

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail-box") as box:
            box.border_title = "schedules: last run, next run, late"
            box.border_subtitle = "esc to close · q quits"
            yield Static(schedules_renderable(self._report, self._threshold_s), id="schedules-body")

    def on_mount(self) -> None:
        self.query_one("#detail-box").focus()
