"""FleetApp: one row per queue of each target (one per target until it is detected), each target
polled on its own thread by a FleetPoller; enter picks one.

The app only renders `FleetPoller.entries()` (twice a second, so a row's "updated" age moves and a
down target shows at once); it never waits on a database. Choosing a target exits with its name:
the launcher opens that target's dashboard and comes back here when escape leaves it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Static

from pgq_tui.fleet.rows import FleetRow, fleet_row, fleet_summary
from pgq_tui.tui.format import DASH, LEVEL_STYLE, fmt_age, fmt_count, level, safe
from pgq_tui.tui.quiet import changed, update_static

if TYPE_CHECKING:
    from pgq_tui.fleet.poller import FleetPoller

RENDER_EVERY_S = 0.5
COLUMNS = (
    "name",
    "kind",
    "version",
    "state",
    "ready",
    "stuck",
    "dead",
    "oldest",
    "poll",
    "updated",
    "health",
)
MARK = {"ok": "✓", "warn": "!", "crit": "!!", "unknown": "?"}
SLOW_POLL_S = 3.0  # a poll running this long is shown as slow, not silently as the last state


def state_cell(row: FleetRow, interval: float) -> Text:
    if row.state == "down":
        return Text("✗ down", style="bold red")
    if row.state == "waiting":  # no answer yet: say for how long (a connect can take its full timeout)
        return Text(f"… {fmt_age(int(row.waiting_s))}" if row.waiting_s >= 1 else "…", style="dim")
    if row.waiting_s >= max(SLOW_POLL_S, 2 * interval):
        return Text(f"⧗ {fmt_age(int(row.waiting_s))}", style="yellow")
    return Text("● up", style="green")


def row_cells(row: FleetRow, interval: float) -> list[Text]:
    stale = "dim" if row.state != "up" else ""

    def count(n: int | None, alert: bool = False, name: str = "") -> Text:
        style = "bold red" if alert and n else stale
        if name in row.unknown:  # the kind has this state but it was not counted: never 0
            return Text("?", style="yellow", justify="right")
        if n is None:
            return Text(DASH, style="dim", justify="right")
        return Text(fmt_count(n, row.estimated), style=style, justify="right")

    oldest = Text(DASH, style="dim", justify="right")
    if "oldest_ready_age_s" in row.unknown:  # not taken (e.g. its background scan not landed): never 0
        oldest = Text("?", style="yellow", justify="right")
    elif row.oldest_ready_s is not None:
        lvl = level(row.oldest_ready_s, 30, 300)
        oldest = Text(fmt_age(row.oldest_ready_s), style=stale or LEVEL_STYLE.get(lvl, ""), justify="right")
    verdict_style = LEVEL_STYLE.get(row.level, "yellow") if row.level != "ok" else "green"
    return [
        safe(row.name, style="bold"),
        safe(row.kind or DASH, style="cyan" if row.kind else "dim"),
        Text(row.version or DASH, style="" if row.version else "dim"),
        state_cell(row, interval),
        count(row.ready, name="ready"),
        count(row.stuck, alert=True, name="stuck"),
        count(row.dead, name="dead"),
        oldest,
        Text(DASH if row.poll_ms is None else f"{row.poll_ms:.0f}ms", style=stale, justify="right"),
        Text(DASH, style="dim")
        if row.data_age_s is None
        else Text(fmt_age(int(row.data_age_s)) + " ago", style="bold yellow" if stale else "dim"),
        safe(f"{MARK[row.level]} {row.verdict}", style=verdict_style, limit=200),
    ]


class FleetApp(App[str | None]):
    TITLE = "pgq-top fleet"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    #fleet-header { height: 1; background: $panel; }
    #fleet { height: 1fr; }
    #fleet-detail { height: auto; max-height: 4; padding: 0 1; background: $boost; }
    #fleet-notice { height: auto; max-height: 2; background: $error; display: none; }
    """
    BINDINGS = [
        Binding("enter", "open", "Open dashboard"),
        Binding("f5,ctrl+r", "refresh", "Refresh now"),
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        poller: FleetPoller,
        *,
        interval: float = 2.0,
        cursor: int = 0,
        notice: tuple[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.poller = poller
        self.interval = interval
        self.clock = clock
        self.rows: list[FleetRow] = []
        self.renders = 0
        self._cursor = cursor
        self._notice = notice  # (target name, why its dashboard could not open): shown until it is up

    def compose(self) -> ComposeResult:
        yield Static(id="fleet-header")
        yield Static(id="fleet-notice")
        table: DataTable[Any] = DataTable(id="fleet", cursor_type="row", zebra_stripes=True)
        for col in COLUMNS:
            table.add_column(col, key=col)
        yield table
        yield Static(id="fleet-detail")
        yield Footer()

    def on_mount(self) -> None:
        if self._notice:
            notice = self.query_one("#fleet-notice", Static)
            notice.update(safe(f"{self._notice[0]}: {self._notice[1]}"))
            notice.display = True
        self._render_rows()
        table = self.query_one(DataTable)
        table.move_cursor(row=min(self._cursor, max(table.row_count - 1, 0)))
        table.focus()
        self.set_interval(RENDER_EVERY_S, self._render_rows)

    def _render_rows(self) -> None:
        if not self.is_running:
            return  # shutting down: the table may already be gone while the timer still fires
        now = self.clock()
        self.rows = [fleet_row(e, now) for e in self.poller.entries()]
        table = self.query_one(DataTable)
        if [k.value for k in table.rows] != [row.name for row in self.rows]:
            # new rows (at start, or a target detected: its queues replace its placeholder): rebuild
            # in order, so the cursor's index stays the index into self.rows
            cursor = table.cursor_row
            table.clear()
            for row in self.rows:
                cells = row_cells(row, self.interval)
                table.add_row(*cells, key=row.name)
                for col, cell in zip(COLUMNS, cells, strict=True):
                    changed(table, f"{row.name}\0{col}", cell)
            table.move_cursor(row=min(cursor, max(table.row_count - 1, 0)))
        else:
            for row in self.rows:
                for col, cell in zip(COLUMNS, row_cells(row, self.interval), strict=True):
                    if changed(table, f"{row.name}\0{col}", cell):  # only what changed is sent
                        table.update_cell(row.name, col, cell, update_width=True)
        if self._notice and any(r.name == self._notice[0] and r.state == "up" for r in self.rows):
            self.query_one("#fleet-notice", Static).display = False
        header = Text(" pgq-top fleet ", style="bold reverse")
        targets = len(getattr(self.poller, "targets", self.rows))
        queues = f" ({len(self.rows)} queues)" if len(self.rows) != targets else ""
        header.append(f" {targets} targets{queues} · every {self.interval:g}s · {fleet_summary(self.rows)}")
        update_static(self.query_one("#fleet-header", Static), header)
        self._render_detail()
        self.renders += 1

    def _render_detail(self) -> None:
        table = self.query_one(DataTable)
        if not self.rows or not 0 <= table.cursor_row < len(self.rows):
            return
        row = self.rows[table.cursor_row]
        where = " ".join(p for p in (row.kind, row.table) if p) or "detecting…"
        text = safe(f"{row.name} · {where} · ", style="bold")
        text.append_text(safe(row.verdict, style=LEVEL_STYLE.get(row.level, "yellow")))
        text.append("  (enter: dashboard)", style="dim")
        update_static(self.query_one("#fleet-detail", Static), text, layout=True)

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._render_detail()

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.exit(str(event.row_key.value))

    def action_open(self) -> None:
        table = self.query_one(DataTable)
        if self.rows and 0 <= table.cursor_row < len(self.rows):
            self.exit(self.rows[table.cursor_row].name)

    def action_refresh(self) -> None:
        self.poller.refresh()

    def action_quit(self) -> None:  # type: ignore[override]
        self.exit(None)
