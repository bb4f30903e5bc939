"""The search panel (docs/search.md): `/` with a search (state:dead error:~"refused" ...) opens it over
the dashboard. The search runs in a worker on its own connection (pgq_tui.search.run: read-only,
statement_timeout, escape cancels it); the panel lists the newest matches and says exactly what was
searched. The action keys act on "all matching" (pgq_tui.actions.bulk): one confirmation showing the
count and the SQL with the search as its guard, then batches in a worker with a progress bar; `s`
stops between batches, and the summary says what changed, what was skipped and what was not touched.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Protocol

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Input, ProgressBar, Static

from pgq_tui.actions.bulk import Matching, plan_matching, rate_eta, run_matching, summary
from pgq_tui.dialects.contract import ActionKind
from pgq_tui.search.compile import DEFAULT_SCAN, compile_query
from pgq_tui.search.query import parse
from pgq_tui.search.run import Result, search
from pgq_tui.tui.format import safe
from pgq_tui.tui.keys import READ_ONLY_REFUSAL
from pgq_tui.tui.screens.confirm import ConfirmScreen

if TYPE_CHECKING:
    from pgq_tui.actions.model import ActionOutcome
    from pgq_tui.tui.ports import ActionsPort

# the bulk keys, as on the dashboard where one exists (r requeue, t retry, D discard); X: cancel jobs
BULK_KEYS = {ActionKind.REQUEUE: "r", ActionKind.RETRY: "t", ActionKind.DISCARD: "D", ActionKind.CANCEL: "X"}


class Cancellable(Protocol):
    """The search's connection, as far as the panel knows it: escape cancels its statement."""

    def cancel_safe(self) -> None: ...


class SearchDone(Message):
    def __init__(self, result: Result | None, error: str | None) -> None:
        super().__init__()
        self.result, self.error = result, error


class BulkPlanned(Message):
    def __init__(self, matching: Matching | None, error: str | None) -> None:
        super().__init__()
        self.matching, self.error = matching, error


class BulkProgress(Message):
    def __init__(self, done: int, total: int) -> None:
        super().__init__()
        self.done, self.total = done, total


class BulkFinished(Message):
    def __init__(self, text: str, outcome: ActionOutcome) -> None:
        super().__init__()
        self.text, self.outcome = text, outcome


class SearchScreen(ModalScreen[None]):
    """The matches of one search and the bulk actions on them. Escape clears the search (closes)."""

    BINDINGS = [
        Binding("escape", "close", "Clear"),
        Binding("slash", "edit", "Edit", key_display="/"),
        Binding("f5,ctrl+r", "rerun", "Search again", show=False),
        Binding(BULK_KEYS[ActionKind.REQUEUE], "bulk('requeue')", "Requeue all"),
        Binding(BULK_KEYS[ActionKind.RETRY], "bulk('retry')", "Retry all"),
        Binding(BULK_KEYS[ActionKind.DISCARD], "bulk('discard')", "Discard all"),
        Binding(BULK_KEYS[ActionKind.CANCEL], "bulk('cancel')", "Cancel all"),
        Binding("s", "stop", "Stop"),
        Binding("q", "app.quit", "Quit", show=False),
    ]

    def __init__(self, text: str, engine: ActionsPort | None, *, read_only: bool = False) -> None:
        super().__init__()
        self.text = text
        self.engine = engine
        self.read_only = read_only or engine is None or engine.read_only
        self.limit_scan: int | None = DEFAULT_SCAN
        self.result: Result | None = None
        self.error: str | None = None
        self.searching = False
        self.running: ActionKind | None = None  # a bulk action in progress
        self.last: str | None = None  # the last bulk action's summary
        self.outcome: ActionOutcome | None = None
        self._conn: Cancellable | None = None
        self._stop = threading.Event()
        self._started = 0.0

    # -- layout ----------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static(id="search-title")
        yield Static(id="search-summary")
        yield Input(value=self.text, id="search-input")
        table: DataTable[Any] = DataTable(id="search-rows", cursor_type="row")
        yield table
        yield ProgressBar(id="search-progress", show_eta=False)
        yield Static(id="search-rate")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#search-rows", DataTable)
        for label, width in (
            ("id", 8),
            ("queue", 12),
            ("state", 9),
            ("time", 8),
            ("error", 24),
            ("payload", None),
        ):
            table.add_column(label, width=width, key=label)
        self.query_one("#search-input").display = False
        self.query_one("#search-progress").display = False
        self.query_one("#search-rate").display = False
        table.focus()
        self._show()
        self.run_search()

    def _show(self) -> None:
        title = Text("search: ", style="bold")
        title.append_text(safe(self.text, style="bold magenta"))
        self.query_one("#search-title", Static).update(title)
        line = Text()
        if self.searching:
            line.append("searching… (esc cancels)", style="dim")
        elif self.error is not None:
            line.append_text(safe(self.error, style="bold red"))
        elif self.result is not None:
            at = self.result.as_of.astimezone().strftime("%H:%M:%S")
            line.append(f"{self.result.summary()} · as of {at}", style="bold")
            if self.result.matched > len(self.result.rows):
                line.append(f" · newest {len(self.result.rows):,} listed", style="dim")
        if self.last is not None:
            line.append("\n")
            line.append_text(safe(f"last action: {self.last}", style="yellow"))
        self.query_one("#search-summary", Static).update(line)

    # -- the search ------------------------------------------------------------------------------
    def run_search(self) -> None:
        if self.engine is None:
            self.error = "no database connection to search"
            self._show()
            return
        self.searching, self.error = True, None
        self._show()
        self._search(self.text)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def _search(self, text: str) -> None:
        assert self.engine is not None
        try:
            query = parse(text, datetime.now(timezone.utc).astimezone())
            compile_query(query, self.engine.model)  # a term the kind cannot serve: one line
            result = search(
                self.engine.conninfo,
                self.engine.model,
                query,
                limit_scan=self.limit_scan,
                on_connect=self._keep,
            )
        except Exception as exc:  # QueryError / PgqError are one line; anything else too, never a crash
            self.post_message(SearchDone(None, str(exc).splitlines()[0] if str(exc) else type(exc).__name__))
            return
        finally:
            self._conn = None
        self.post_message(SearchDone(result, None))

    def _keep(self, conn: Cancellable) -> None:
        self._conn = conn

    def on_search_done(self, message: SearchDone) -> None:
        self.searching = False
        self.result, self.error = message.result, message.error
        table = self.query_one("#search-rows", DataTable)
        table.clear()
        for r in message.result.rows if message.result is not None else ():
            at = r["at"].astimezone().strftime("%H:%M:%S") if isinstance(r["at"], datetime) else "-"
            table.add_row(
                Text(str(r["id"]), justify="right"),
                safe(r["queue"], limit=12),
                safe(r["state"] or "?"),
                Text(at),
                safe(r["error"], style="yellow", limit=24),
                safe(r["payload"], style="dim", limit=60),
            )
        self._show()

    def action_rerun(self) -> None:
        if self.running is None:
            self.run_search()

    def action_edit(self) -> None:
        if self.running is not None:
            self.notify("a bulk action is running: s stops it between batches", severity="warning")
            return
        box = self.query_one("#search-input", Input)
        box.display = True
        self.set_focus(box)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        event.input.display = False
        self.query_one("#search-rows").focus()
        text = event.value.strip()
        if text and text != self.text:
            self.text, self.last = text, None
        self.run_search()

    def on_key(self, event: events.Key) -> None:
        # read-only: the bulk keys are unbound (check_action); say so rather than ignore the key
        if (
            self.read_only
            and event.key in BULK_KEYS.values()
            and not self.query_one("#search-input").has_focus
        ):
            event.stop()
            self.notify(READ_ONLY_REFUSAL, severity="warning", timeout=4)

    def action_close(self) -> None:
        box = self.query_one("#search-input", Input)
        if box.has_focus:  # escape in the box: back to the results, the search unchanged
            box.value, box.display = self.text, False
            self.query_one("#search-rows").focus()
            return
        if self.running is not None:
            self.notify("a bulk action is running: s stops it between batches", severity="warning")
            return
        conn = self._conn
        if conn is not None:  # a search still running: cancel its statement (its connection closes)
            conn.cancel_safe()
        self.dismiss(None)

    # -- bulk actions ----------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "bulk":
            if self.read_only or self.engine is None:
                return False  # hidden, as the dashboard's write keys are with --read-only
            kind = ActionKind(str(parameters[0]))
            return self.engine.model.action(kind) is not None  # the kind offers it, or no key
        if action == "stop":
            return self.running is not None
        return True

    def action_bulk(self, kind_name: str) -> None:
        kind = ActionKind(kind_name)
        if self.running is not None:
            self.notify("a bulk action is already running", severity="warning")
            return
        if self.result is None or self.searching:
            self.notify("no search result yet", severity="warning")
            return
        if not self.result.matched:
            self.notify(f"nothing to {kind.value}: no job matches", severity="warning")
            return
        self.notify(f"planning {kind.value} of every job matching {self.text!r}…", timeout=3)
        self._plan(kind)

    @work(thread=True, exclusive=True, group="bulk-plan", exit_on_error=False)
    def _plan(self, kind: ActionKind) -> None:
        assert self.engine is not None
        try:
            query = parse(self.text, datetime.now(timezone.utc).astimezone())
            matching = plan_matching(self.engine, kind, query, limit_scan=self.limit_scan)
        except Exception as exc:
            self.post_message(BulkPlanned(None, str(exc).splitlines()[0] if str(exc) else type(exc).__name__))
            return
        self.post_message(BulkPlanned(matching, None))

    def on_bulk_planned(self, message: BulkPlanned) -> None:
        matching = message.matching
        if matching is None:
            self.notify(str(message.error), title="could not plan", severity="error", timeout=8)
            return
        plan = matching.plan
        if plan.refused:
            self.notify(str(plan.refused), title=str(plan.title), severity="warning", timeout=8)
            return

        def first(yes: bool | None) -> None:
            if not yes:
                self.notify("aborted: nothing was changed", timeout=3)
            elif plan.needs_second_confirmation:
                self.app.push_screen(ConfirmScreen(plan, second=True), second)
            else:
                self._begin(matching)

        def second(yes: bool | None) -> None:
            if yes:
                self._begin(matching)
            else:
                self.notify("aborted: nothing was changed", timeout=3)

        self.app.push_screen(ConfirmScreen(plan), first)

    def _begin(self, matching: Matching) -> None:
        self.running, self.last = matching.kind, None
        self._stop.clear()
        self._started = time.monotonic()
        bar = self.query_one("#search-progress", ProgressBar)
        bar.update(total=max(1, matching.plan.count), progress=0)
        bar.display = True
        rate = self.query_one("#search-rate", Static)
        rate.display = True
        rate.update(Text(f"{matching.kind.value}: 0 of ~{matching.plan.count:,} · s stops between batches"))
        self.refresh_bindings()
        self._show()  # the previous action's summary goes
        self._run(matching)

    @work(thread=True, exclusive=True, group="bulk-run", exit_on_error=False)
    def _run(self, matching: Matching) -> None:
        assert self.engine is not None

        def progress(done: int, total: int) -> None:
            self.post_message(BulkProgress(done, total))

        outcome = run_matching(self.engine, matching, progress=progress, stop=self._stop)  # never raises
        self.post_message(BulkFinished(summary(matching, outcome), outcome))

    def on_bulk_progress(self, message: BulkProgress) -> None:
        if self.running is None:
            return
        self.query_one("#search-progress", ProgressBar).update(
            total=max(1, message.total), progress=message.done
        )
        line = rate_eta(self.running.value, message.done, message.total, time.monotonic() - self._started)
        stopping = " · stopping after this batch…" if self._stop.is_set() else " · s stops between batches"
        self.query_one("#search-rate", Static).update(Text(line + stopping))

    def action_stop(self) -> None:
        if self.running is None:
            return
        self._stop.set()
        self.query_one("#search-rate", Static).update(Text("stopping after this batch…", style="bold yellow"))

    def on_bulk_finished(self, message: BulkFinished) -> None:
        self.running, self.last, self.outcome = None, message.text, message.outcome
        self.query_one("#search-rate", Static).update(safe(message.text, style="bold"))
        failed = message.outcome.error is not None and not message.outcome.stopped
        self.notify(message.text, severity="error" if failed else "information", timeout=10)
        self.refresh_bindings()
        self.run_search()  # what matches now
        tick = getattr(self.app, "_tick", None)
        if callable(tick):
            tick(True)  # the dashboard underneath refreshes too
