"""Job detail: the full row (payload pretty-printed, attempts, last error, lease, timestamps)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from rich.console import Group
from rich.json import JSON
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from pgq_tui.jobid import JobId
from pgq_tui.tui.format import DASH, fmt_age, payload_json, safe
from pgq_tui.tui.screens import QUIT


def _when(value: datetime | None, now: datetime | None) -> Text:
    """An absolute time plus, against the server's clock of the last poll, how far away it is."""
    if value is None:
        return Text(DASH, style="dim")
    text = Text(value.isoformat(sep=" ", timespec="seconds"))
    if now is not None:
        delta = (value - now).total_seconds()
        text.append(f"  ({fmt_age(abs(delta))} {'from now' if delta > 0 else 'ago'})", style="dim")
    return text


ERROR_LINES = 3  # of each attempt's error shown (a traceback's first lines; `pgq-top job ID` has them all)


def _grid() -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    return grid


def attempts_renderables(history: dict[str, Any] | None, now: datetime | None) -> list[Any]:
    """Pure: the job's attempts, newest first (attempt number, when with its age, outcome, worker, the
    error's first lines), or why there are none to show. Every text from the database goes through `safe`."""
    parts: list[Any] = [Text("\nattempts, newest first", style="bold")]
    if history is None:  # no dialect read (an older caller): nothing to say either way
        return []
    rows = history.get("attempts")
    if rows is None:
        parts.append(safe(history.get("reason") or "not recorded", style="dim"))
        return parts
    if not rows:
        parts.append(Text("none recorded yet", style="dim"))
        return parts
    for row in rows:
        number = row.get("attempt")
        line = Text(f"#{number if number is not None else '?'}  ", style="bold")
        if row.get("outcome"):
            line.append_text(safe(row["outcome"], style="cyan"))
            line.append("  ")
        at = row.get("at")
        line.append_text(_when(at, now) if at is not None else Text("? (time not recorded)", style="dim"))
        parts.append(line)
        if row.get("worker"):
            parts.append(Text("   by ", style="dim").append_text(safe(row["worker"], style="dim")))
        error = row.get("error")
        lines = str(error).splitlines() if error else []
        for text in lines[:ERROR_LINES]:
            parts.append(Text("   ").append_text(safe(text, style="yellow")))
        if len(lines) > ERROR_LINES:
            parts.append(Text(f"   … {len(lines) - ERROR_LINES} more lines", style="dim"))
        trace = row.get("trace")
        if trace:
            first = str(trace).strip().splitlines()[:1]
            parts.extend(Text("   ").append_text(safe(t, style="dim")) for t in first)
    return parts


def detail_renderable(job: dict[str, Any], now: datetime | None = None) -> Group:
    """Pure: a job row as rich renderables; every text value from the row goes through `safe`. Who
    and what come first, then the attempts (the history an operator opens a job for), then the lease,
    the times, the last error, the payload and the framework's own fields."""
    head = _grid()
    head.add_row("id", Text(str(job.get("id"))))
    head.add_row("queue", safe(job.get("queue")))
    head.add_row("status", safe(job.get("status")))
    head.add_row("attempts", Text(f"{job.get('attempts', '?')} of {job.get('max_attempts', '?')}"))
    history = job.get("history")
    facts = _grid()
    facts.add_row("priority", Text(str(job.get("priority", DASH))))
    facts.add_row("locked_by", safe(job.get("locked_by")))
    facts.add_row("locked_until", _when(job.get("locked_until"), now))
    facts.add_row("renewed", _when(job.get("heartbeat_at"), now))  # the holder's last heartbeat
    facts.add_row("run_at", _when(job.get("run_at"), now))
    facts.add_row("created_at", _when(job.get("created_at"), now))
    facts.add_row("finished_at", _when(job.get("finished_at"), now))
    if job.get("kind"):  # a job of another framework, read through its dialect
        facts.add_row("queue kind", safe(job.get("kind")))
        facts.add_row("started_at", _when(job.get("started_at"), now))
        facts.add_row("stuck means", safe(job.get("stuck_rule")))
    error = job.get("last_error")
    parts: list[Any] = [
        head,
        *attempts_renderables(history, now),
        Text(""),
        facts,
        Text("\nlast error", style="bold"),
    ]
    # Multi-line errors (tracebacks) keep their lines; other control characters are made visible.
    if error:
        parts.extend(safe(line, style="yellow") for line in str(error).splitlines())
    else:
        parts.append(Text(DASH, style="dim"))
    parts.append(Text("\npayload", style="bold"))
    parts.append(JSON(payload_json(job.get("payload"))))
    details = job.get("details") or {}
    if details:
        own = _grid()
        for key, value in details.items():
            own.add_row(safe(str(key), style="dim"), safe(str(value)))
        parts.extend([Text(f"\n{job.get('kind') or 'framework'} fields", style="bold"), own])
    return Group(*parts)


class DetailScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Close"),
        QUIT,
        Binding("enter", "app.pop_screen", "Close", show=False),
    ]

    def __init__(
        self,
        job_id: JobId,
        fetch: Callable[[JobId], dict[str, Any] | None] | None,
        now: datetime | None = None,
    ) -> None:
        super().__init__()
        self.job_id = job_id
        self.now = now  # the server's clock at the last poll: "expired 1m35s ago" beats a timestamp
        self._fetch = fetch  # actions.job_detail, or None when there is no database (tests)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail-box") as box:
            box.border_title = f"Job {self.job_id}"
            box.border_subtitle = "esc to close"
            yield Static("loading…", id="detail-body")

    def on_mount(self) -> None:
        self.query_one("#detail-box").focus()
        if self._fetch is None:
            self.query_one("#detail-body", Static).update(Text("no database connection for details"))
        else:
            self._load()

    @work(thread=True, exclusive=True, group="detail", exit_on_error=False)
    def _load(self) -> None:
        try:
            job = self._fetch(self.job_id) if self._fetch is not None else None
            if job:
                body: Any = detail_renderable(job, job.get("as_of") or self.now)  # the read's own clock
            else:
                body = Text(f"job {self.job_id} no longer exists", style="yellow")
        except Exception as exc:  # a lost connection (PgqError) or a bad row: a message, never a crash
            body = safe(f"could not load job {self.job_id}: {exc}", style="red")
        self.app.call_from_thread(self._show, body)

    def _show(self, body: Any) -> None:
        if self.is_attached:
            self.query_one("#detail-body", Static).update(body)
