"""PgqTopApp: polls a snapshot source in a thread worker and renders each Snapshot into the panels.

Data flows one way: source.collect() (thread) -> SnapshotReady message -> widgets. Writes go through
`pgq_tui.actions` (see fixes.py), demo controls through the DemoController (see demo_keys.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections import deque
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from rich.text import Text
from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.widget import Widget
from textual.widgets import DataTable, Footer, Input, Static

from pgq_tui.diagnosis import Chain, Thresholds, diagnose
from pgq_tui.diagnosis.findings import DEFAULTS
from pgq_tui.errors import describe
from pgq_tui.history.series import WINDOWS, next_window
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.search.query import QueryError, is_search, parse
from pgq_tui.tui import hangup, heap, keys
from pgq_tui.tui.demo_keys import DemoKeys
from pgq_tui.tui.fixes import Fixes
from pgq_tui.tui.messages import CollectFailed, SnapshotReady
from pgq_tui.tui.ports import ActionsPort, DemoPort
from pgq_tui.tui.quiet import update_static
from pgq_tui.tui.screens.detail import DetailScreen
from pgq_tui.tui.screens.help import HelpScreen
from pgq_tui.tui.screens.queue import QueueScreen
from pgq_tui.tui.screens.schedules import SchedulesScreen
from pgq_tui.tui.screens.search import SearchScreen
from pgq_tui.tui.screens.session import SessionScreen
from pgq_tui.tui.screens.why import WhyScreen
from pgq_tui.tui.source import SnapshotSource, as_source
from pgq_tui.tui.widgets.chart import ThroughputChart
from pgq_tui.tui.widgets.health import HealthPanel
from pgq_tui.tui.widgets.jobs import DeadTable, LeasesTable, StuckTable
from pgq_tui.tui.widgets.queues import QueuesTable
from pgq_tui.tui.widgets.sessions import SessionsTable
from pgq_tui.tui.widgets.status import (
    Banner,
    Connection,
    DemoBar,
    Header,
    VerdictLine,
    header_text,
    steady_poll_ms,
)
from pgq_tui.tui.widgets.table import PanelTable, queue_filter, selected_queue

INTERVALS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
BACK = -1  # the app's result when escape leaves a dashboard opened from the fleet screen
COMPACT_WIDTH = 120  # below this the panels no longer fit side by side
COMPACT_HEIGHT = 34
STUCK_POLL_S = 10.0  # a poll with no answer this long (a hung network, not a timeout): say so


def step_interval(current: float, direction: int) -> float:
    """The next preset interval up or down from `current`.

    >>> step_interval(2.0, 1), step_interval(2.0, -1), step_interval(0.5, -1), step_interval(3.0, 1)
    (5.0, 1.0, 0.5, 5.0)
    """
    if direction > 0:
        return next((i for i in INTERVALS if i > current), INTERVALS[-1])
    return next((i for i in reversed(INTERVALS) if i < current), INTERVALS[0])


class PgqTopApp(DemoKeys, Fixes, App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "pgq-top"
    ENABLE_COMMAND_PALETTE = False
    # ctrl+c quits too (with a clean demo teardown): at 3 a.m. nobody should have to remember ctrl+q.
    BINDINGS = [*keys.BINDINGS, Binding("ctrl+c", "quit", "Quit", show=False, priority=True)]

    def __init__(
        self,
        source: SnapshotSource | Callable[[], Snapshot],
        *,
        actions: ActionsPort | None = None,
        target: str = "public.jobs",
        interval: float = 2.0,
        read_only: bool = False,
        demo: DemoPort | None = None,
        clock: Callable[[], float] = time.monotonic,
        poll: bool = True,
        initial: Snapshot | None = None,
        back: bool = False,
        diagnosis: Thresholds = DEFAULTS,
        freeze_heap: bool = False,
    ) -> None:
        super().__init__()
        self._freeze_heap = freeze_heap  # the dashboard a user starts only (tui/heap.py)
        self.back = back  # opened from the fleet: escape with nothing to clear goes back to it
        self.source = as_source(source)
        self.actions = actions
        self.target = target
        self.interval = max(0.2, float(interval))
        self.read_only = read_only
        self.demo = demo
        self.clock = clock
        self.poll = poll  # False: tests drive refresh() themselves
        self.snapshot: Snapshot | None = None
        self.paused = False
        self.connected: bool | None = None
        self.error: str | None = None
        self.filter_text = ""
        self.collects = 0  # polls started (tests check that pause stops them)
        self.received = 0  # snapshots rendered (tests wait on it)
        self._data_at: float | None = None
        self._poll_ms: float | None = None  # the poll time the header shows (steady_poll_ms)
        self._in_flight = False
        self._flight_started = 0.0
        self._refresh_pending = False
        self._previous_sighup: Any = None
        self._timer: Any = None
        self.current_panel = "stuck"  # the panel shown under the queues when the terminal is small
        self._initial = initial  # the launcher's check poll: the first frame already has data
        # The diagnosis reads the recent polls (pgq_tui.diagnosis): kept as long as its longest window.
        self.thresholds = diagnosis
        self.history: deque[Snapshot] = deque()
        self.chains: list[Chain] = []

    # -- layout ----------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(self.header_line, id="header")
        yield Banner(self.banner_state, id="banner")
        if self.demo is not None:
            yield DemoBar("demo starting…", id="demo")
        yield Static(id="tabs")
        with Container(id="grid"):
            yield QueuesTable(id="queues", classes="panel")
            yield ThroughputChart(id="chart", classes="panel")
            yield StuckTable(id="stuck", classes="panel")
            yield LeasesTable(id="leases", classes="panel")
            yield DeadTable(id="dead", classes="panel")
            yield SessionsTable(id="sessions", classes="panel")
            yield HealthPanel(id="health", classes="panel")
        yield VerdictLine("health: waiting for data…", id="verdict")
        yield Input(
            placeholder="filter: text or queue:NAME · search: state:dead error:~text args.k:v (enter runs)",
            id="filter",
        )
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#filter").display = False
        self._apply_size(self.size.width, self.size.height)
        self.query_one("#queues").focus()
        if self._initial is not None:
            self.post_message(SnapshotReady(self._initial))
        if self._freeze_heap:
            self.call_after_refresh(heap.freeze_long_lived)  # once the first screen is drawn
        if self.poll:
            self._timer = self.set_interval(self.interval, self._tick)
            if self._initial is None:
                self._tick()
        # SIGTERM: leave cleanly (the demo is torn down by the launcher). SIGHUP: the terminal is gone.
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, self.exit)
            self._previous_sighup = hangup.install(self)

    def on_resize(self, event: Any) -> None:
        self._apply_size(event.size.width, event.size.height)

    def _apply_size(self, width: int, height: int) -> None:
        compact = width < COMPACT_WIDTH or height < COMPACT_HEIGHT
        self.query_one("#grid").set_class(compact, "-compact")
        self.query_one("#tabs").display = compact
        # The queues keep at most half of a small screen: the panel under them must stay visible.
        self.query_one("#queues").styles.max_height = min(9, max(4, (height - 4) // 2)) if compact else None
        self._show_current()
        if self.snapshot is not None:
            self._render_snapshot()

    def _show_current(self) -> None:
        compact = self.query_one("#grid").has_class("-compact")
        for panel in self.query(".panel"):
            panel.set_class(panel.id == self.current_panel, "-current")
            # Inline display, not a CSS rule: it applies at once, so focus can move at once too.
            panel.display = not compact or panel.id in ("queues", self.current_panel)
        tabs = []
        for i, panel_id in enumerate(keys.PANEL_IDS, 1):
            mark = "▸" if panel_id == self.current_panel else " "
            tabs.append(f"{mark}{i} {panel_id}")
        update_static(self.query_one("#tabs", Static), " ".join(tabs))

    def panel(self, panel_id: str) -> Any:
        return self.query_one(f"#{panel_id}")

    # -- polling ---------------------------------------------------------------------------------
    def _tick(self, force: bool = False) -> None:
        if self._in_flight:
            # Never pile polls up behind a slow server; but a forced refresh (after an action) must
            # not be lost either: the poll in flight may predate the write.
            self._refresh_pending = self._refresh_pending or force
            return
        if self.paused and not force:
            return
        self._in_flight = True
        self._flight_started = self.clock()
        self.collects += 1
        self._collect()

    @work(thread=True, exclusive=True, group="collect", exit_on_error=False)
    def _collect(self) -> None:
        try:
            snap = self.source.collect()
        except Exception as exc:  # PgqError when the server is gone; anything else must not kill the UI
            self.post_message(CollectFailed(str(describe(exc))))
            return
        status = None
        if self.demo is not None:
            try:
                status = self.demo.status()
            except Exception:  # the demo line is a nicety; the dashboard goes on without it
                status = None
        self.post_message(SnapshotReady(snap, status))

    @on(SnapshotReady)
    def _on_snapshot(self, message: SnapshotReady) -> None:
        self._landed()
        self.received += 1
        self.snapshot = message.snapshot
        self._diagnose(message.snapshot)
        self._poll_ms = steady_poll_ms(self._poll_ms, message.snapshot.server.collect_ms)
        self.connected = True
        self.error = None
        self._data_at = self.clock()
        if self._torn_down():
            return  # the screen is being torn down: a poll that lands now has nothing to update
        self.query_one("#grid").remove_class("-stale")
        if message.demo_status is not None and self.demo is not None:
            self.query_one(DemoBar).show(message.demo_status)
        self._render_snapshot()
        self._update_header()

    def _diagnose(self, snap: Snapshot) -> None:
        keep = max(self.thresholds.backlog_window_s, self.thresholds.min_duration_s) + 2 * self.interval
        self.history.append(snap)
        while len(self.history) > 1 and (snap.server.now - self.history[0].server.now).total_seconds() > keep:
            self.history.popleft()
        self.chains = diagnose(self.history, self.thresholds)

    @on(CollectFailed)
    def _on_failed(self, message: CollectFailed) -> None:
        self._landed()
        self.connected = False
        self.error = message.error
        if self._torn_down():
            return  # the screen is being torn down (quit while a poll was failing): nothing to mark
        self.query_one("#grid").add_class("-stale")
        self._update_header()

    def _torn_down(self) -> bool:
        """True once the app has begun to shut down: its widgets are then removed one by one, so a
        poll landing meanwhile may find #grid still there but a panel inside it already gone."""
        return not self.is_running or not self.query("#grid")

    def _landed(self) -> None:
        self._in_flight = False
        if self._refresh_pending:
            self._refresh_pending = False
            self.call_later(self._tick, True)

    def _render_snapshot(self) -> None:
        snap = self.snapshot
        if snap is None:
            return
        for panel_id in keys.PANEL_IDS:
            self.panel(panel_id).update_from(snap, self.filter_text)
        self.query_one(VerdictLine).update_from(snap, chains=self.chains, hide_keys=self.hidden_keys())

    def hidden_keys(self) -> frozenset[str]:
        """The write keys, with --read-only: the health line and the why screen do not offer them."""
        return keys.WRITE_KEYS if self.read_only else frozenset()

    def connection(self) -> Connection:
        age = None if self._data_at is None else max(0.0, self.clock() - self._data_at)
        waiting = self.clock() - self._flight_started if self._in_flight else 0.0
        return Connection(
            target=self.target,
            interval_s=self.interval,
            paused=self.paused,
            connected=self.connected,
            data_age_s=age,
            read_only=self.read_only,
            error=self.error,
            waiting_s=waiting,
            poll_ms=self._poll_ms,
        )

    def header_line(self) -> Text:
        text = header_text(self.snapshot, self.connection())
        if self.filter_text:
            text.append(f"  filter: {self.filter_text}", style="bold magenta")
        return text

    def banner_state(self) -> Connection | None:
        """The connection when the banner must show (disconnected, or a poll hanging), else None."""
        c = self.connection()
        stuck_poll = c.waiting_s >= max(STUCK_POLL_S, 3 * self.interval)
        return c if self.connected is False or stuck_poll else None

    def _update_header(self) -> None:
        """Re-render both status lines now (they also tick every second on their own timers)."""
        self.query_one(Header).tick()
        self.query_one(Banner).tick()

    # -- view keys -------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Hidden, not greyed out: with --read-only the write keys do not exist at all.
        if action in keys.WRITE_ACTIONS and (self.read_only or self.actions is None):
            return False
        return not (action in keys.DEMO_ACTIONS and self.demo is None)

    def on_key(self, event: events.Key) -> None:
        # With writes off the write keys are unbound (check_action), so they reach here: say so, rather
        # than leave the user wondering whether the key was seen.
        if event.key in keys.WRITE_KEYS and self.hidden_keys() and self.screen is self.screen_stack[0]:
            event.stop()
            self.notify(keys.READ_ONLY_REFUSAL, severity="warning", timeout=4)

    def action_refresh(self) -> None:
        self._tick(force=True)

    def action_pause(self) -> None:
        self.paused = not self.paused
        self.notify("paused: data will not refresh" if self.paused else "resumed", timeout=2)
        self._update_header()

    def action_interval(self, direction: int) -> None:
        self.interval = step_interval(self.interval, direction)
        if self._timer is not None:
            self._timer.stop()
            self._timer = self.set_interval(self.interval, self._tick)
        self._update_header()

    def action_help(self) -> None:
        active = [ab.binding for ab in self.screen.active_bindings.values() if keys.section(ab.binding)]
        notes = [keys.READ_ONLY_REFUSAL] if self.read_only else []
        if self.back:
            notes.append("escape with no filter or marks to clear: back to the fleet")
        if self.snapshot is not None and self.snapshot.stuck_rule:
            notes.append(
                f"{self.snapshot.target or self.snapshot.kind}: stuck means {self.snapshot.stuck_rule}"
            )
        self.push_screen(HelpScreen(active, keys.TABLE_KEYS, "\n".join(notes)))

    def _typing(self, char: str) -> bool:
        """Priority keys are also text: while the filter box has focus, type them into it."""
        box = self.query_one("#filter", Input)
        if box.has_focus:
            box.insert_text_at_cursor(char)
        return box.has_focus

    def action_focus_panel(self, panel_id: str) -> None:
        if self._typing(str(keys.PANEL_IDS.index(panel_id) + 1)):
            return
        if panel_id != "queues":
            self.current_panel = panel_id
            self._show_current()
        # Synchronous: over SSH "2⏎" often arrives in one read, and the ⏎ must reach the new panel.
        self.screen.set_focus(self.panel(panel_id))

    def action_cycle_panel(self, direction: int) -> None:
        focused = self.focused.id if self.focused is not None else None
        ids = keys.PANEL_IDS
        index = ids.index(focused) if focused in ids else 0
        self.action_focus_panel(ids[(index + direction) % len(ids)])

    def action_mark(self) -> None:
        if isinstance(self.focused, PanelTable):
            self.focused.toggle_mark()

    def action_filter(self) -> None:
        if self._typing("/"):
            return
        box = self.query_one("#filter", Input)
        box.display = True
        # At once, not deferred: "/reports" typed fast must not fire `r` (requeue) on the table.
        self.screen.set_focus(box)

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        if box.has_focus:
            box.value = ""
            self._set_filter("")
            self._close_filter()
        elif self.filter_text:
            self._set_filter("")
        elif isinstance(self.focused, PanelTable) and self.focused.marked:
            self.focused.clear_marks()
        elif self.back:
            self.exit(BACK)

    def _set_filter(self, text: str) -> None:
        self.filter_text = text.strip()
        self._render_snapshot()
        self._update_header()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        # a search (state:dead ...) runs on enter, on the database: it does not narrow the panels
        self._set_filter("" if is_search(event.value) else event.value)

    @on(Input.Submitted, "#filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not is_search(text):
            self._close_filter()
            return
        try:
            parse(text, datetime.now(timezone.utc).astimezone())
        except QueryError as exc:  # one line; the box stays open to fix the term
            self.notify(str(exc), title="search", severity="error", timeout=8)
            return
        event.input.value = ""
        self._close_filter()
        self.open_search(text)

    def open_search(self, text: str) -> None:
        """The search panel over the dashboard: its matches, and the bulk keys (docs/search.md)."""
        self.push_screen(SearchScreen(text, self.actions, read_only=self.read_only))

    def _close_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = False
        target: Widget = self.panel(self.current_panel)
        (target if target.display else self.panel("queues")).focus()

    # -- detail ----------------------------------------------------------------------------------
    @on(DataTable.RowSelected)
    def _open_detail(self, event: DataTable.RowSelected) -> None:
        table = event.data_table
        if not isinstance(table, PanelTable):
            return
        row = table.cursor_row_data()
        if row is None:
            return
        if table.id == "queues":  # enter on a queue narrows every table to exactly it (enter again: all)
            name = queue_filter(str(row.target))
            self._set_filter("" if self.filter_text == name else name)
            self.query_one("#filter", Input).value = self.filter_text
            return
        if row.info is not None:
            self.push_screen(SessionScreen(f"{type(row.info).__name__} {row.target or ''}".strip(), row.info))
            return
        if row.job_id is None:
            return
        fetch = getattr(self.actions, "job_detail", None)
        now = self.snapshot.server.now if self.snapshot is not None else None
        self.push_screen(DetailScreen(row.job_id, fetch, now))

    def action_chart_window(self) -> None:
        chart = self.query_one(ThroughputChart)
        chart.cycle_window(next_window(chart.window))
        self.notify(f"chart window: {WINDOWS[chart.window][0]}", timeout=2)

    def action_why(self) -> None:
        self.push_screen(WhyScreen(self.chains, self.hidden_keys()))

    def action_schedules(self) -> None:
        snap = self.snapshot
        report = snap.schedules if snap is not None else None
        self.push_screen(SchedulesScreen(report, self.thresholds.schedule_late_s))

    def action_queue_detail(self) -> None:
        snap = self.snapshot
        if snap is None or not snap.queues:
            return
        row = self.panel("queues").cursor_row_data()
        name = row.target if row is not None else selected_queue(self.filter_text)
        queue = next((q for q in snap.queues if q.queue == name), snap.queues[0])
        self.push_screen(QueueScreen(snap, queue))

    # -- shutdown --------------------------------------------------------------------------------
    def on_unmount(self) -> None:
        if self._previous_sighup is not None:
            with contextlib.suppress(ValueError):  # not the main thread
                signal.signal(signal.SIGHUP, self._previous_sighup)

    def action_quit(self) -> None:  # type: ignore[override]
        self.exit(0)
