"""How each figure was obtained, in words: for the queue detail view and `pgq-top snapshot`. Pure."""

from __future__ import annotations

from datetime import datetime

from rich.console import Group
from rich.table import Table
from rich.text import Text

from pgq_tui.monitor.cached import SOURCE as CACHED
from pgq_tui.monitor.health import fmt_age, fmt_figure
from pgq_tui.monitor.snapshot import AT_LEAST, UNKNOWN, UNSUPPORTED, Figure, QueueStats, Rates, Snapshot

COUNT_NAMES = ("ready", "scheduled", "running", "stuck", "dead", "done")
RATE_NAMES = ("enqueued", "completed", "failed")


def count_how(figure: Figure | None, cap: int, now: datetime, cost_ms: float | None = None) -> str:
    """One count's provenance as a sentence.

    >>> from datetime import datetime, timezone
    >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> count_how(Figure("at_least", t, "poll"), 1000, t)
    'more than the cap of 1000: this poll stopped counting there, the background count has not caught up'
    """
    if figure is not None and figure.note:  # a figure no index serves: how, then the advice
        return f"{_count_how(figure, cap, now, cost_ms)}; {figure.note}"
    return _count_how(figure, cap, now, cost_ms)


def _count_how(figure: Figure | None, cap: int, now: datetime, cost_ms: float | None) -> str:
    if figure is not None and figure.accuracy == UNKNOWN:
        return f"unknown: {figure.reason or 'not counted'}"
    if figure is not None and figure.accuracy == UNSUPPORTED:
        return f"n/a: {figure.reason or 'this kind has no such state'}"
    if figure is not None and figure.source == "scan":
        return "exact: counted by this poll with a scan (no index serves it; the table is small)"
    if figure is None or (figure.source == "poll" and figure.accuracy != AT_LEAST):
        return f"exact: counted by this poll through its partial index (exact up to the cap of {cap})"
    if figure.accuracy == AT_LEAST:
        if figure.source == "poll" and cap:
            behind = figure.reason or "the background count has not caught up"
            return f"more than the cap of {cap}: this poll stopped counting there, {behind}"
        return "a lower bound: the rows this poll read (the done index has no queue column)" + (
            f"; {figure.reason}" if figure.reason else ""
        )
    age = fmt_age((now - figure.as_of).total_seconds()) if figure.as_of is not None else "?"
    took = f", took {cost_ms:.0f} ms" if cost_ms is not None else ""
    if figure.source == CACHED:  # the framework's own count: its reason says whose, and why not ours
        return f"stale: exact as of {age} ago: {figure.reason}"
    if figure.source == "background scan":
        return f"stale: exact, by the background counter's scan {age} ago (own connection{took})"
    return f"stale: exact count(*) by the background counter {age} ago (own connection{took})"


def index_notes(snap: Snapshot) -> list[str]:
    """Every distinct advice carried by the snapshot's figures and lists (what a missing index costs
    and which one would make the figures live), in the order first seen."""
    notes = [f.note for q in snap.queues for f in q.figures.values() if f.note]
    notes += [x.figure.note for x in (snap.leases, snap.stuck, snap.dead) if x.figure and x.figure.note]
    return list(dict.fromkeys(notes))


def list_note(figure: Figure | None, now: datetime) -> str | None:
    """A list's provenance in a few words for its panel, when the poll did not read it itself.

    >>> from datetime import datetime, timezone
    >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> list_note(None, t), list_note(Figure("unknown", None, "background scan"), t)
    (None, 'scanning in the background')
    >>> list_note(Figure("stale", t, "background scan"), t)
    'scanned 0s ago'
    """
    if figure is None:
        return None
    if figure.accuracy == "unknown" or figure.as_of is None:
        return "scanning in the background"
    return f"scanned {fmt_age(max(0.0, (now - figure.as_of).total_seconds()))} ago"


RATE_SOURCES = {
    "counters": "the <table>_stats counters bumped by pgq_tui.queue in the same statement",
    "ids": "ids first seen per queue since the previous poll (any writer: INSERT, COPY)",
    "depth": "enqueued - change in depth (ready+scheduled+running+stuck+dead) between polls",
    "background depth": "enqueued - change in depth between the last two background counts",
    "failed count": "net change of the dead-letter count between polls",
    "timestamps": "jobs whose own timestamp (created, finished, failed) fell between the polls, any writer",
    "foreign writers": "the counters miss writers other than pgq_tui.queue, and the table cannot derive "
    "this rate yet (the queue is deeper than the count cap: it waits for two background counts)",
}


def rate_how(figure: Figure | None, now: datetime) -> str:
    """One rate's provenance as a sentence.

    >>> rate_how(None, None)  # type: ignore[arg-type]
    'exact: the <table>_stats counters bumped by pgq_tui.queue in the same statement'
    """
    if figure is None:
        return f"exact: {RATE_SOURCES['counters']}"
    source = RATE_SOURCES.get(figure.source, figure.source)
    if figure.source == "foreign writers":
        return f"unknown: {source}"
    if figure.accuracy == UNKNOWN:
        return f"unknown: {figure.reason or source}"
    if figure.accuracy == "approximate" and figure.bound is not None:
        return f"at most {figure.bound:.1f}/s more (ids never seen by a poll): {source}"
    if figure.accuracy == "stale" and figure.as_of is not None:
        return f"exact as of {fmt_age((now - figure.as_of).total_seconds())} ago: {source}"
    if figure.accuracy == AT_LEAST:
        return f"a lower bound (another writer is not counted): {source}"
    return f"{figure.accuracy}: {source}"


def queue_provenance(snap: Snapshot, queue: QueueStats) -> Group:
    """Every figure of one queue: value, accuracy and how it was obtained."""
    now = snap.server.now
    counts = snap.counts
    cap = counts.cap if counts is not None else 0
    cost = counts.cost_ms if counts is not None else None
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column()
    for name in COUNT_NAMES:
        figure = queue.figures.get(name)
        value = fmt_figure(getattr(queue, name), queue.accuracy(name))
        grid.add_row(name, value, Text(count_how(figure, cap, now, cost), style="dim"))
    rates: Rates | None = snap.throughput.per_queue.get(queue.queue)
    for name in RATE_NAMES:
        per_s = getattr(rates, name) if rates is not None else None
        shown = "—" if per_s is None else f"{per_s:.1f}/s"
        figure = rates.figures.get(name) if rates is not None else None
        how = rate_how(figure, now) if rates is not None else "no rate yet (needs two polls)"
        grid.add_row(f"{name}/s", shown, Text(how, style="dim"))
    parts: list[Text | Table] = [grid]
    if snap.throughput.foreign:
        parts += [Text(""), Text(f"{snap.throughput.foreign}: rates derived from the table", style="yellow")]
    if snap.throughput.rates_note:
        parts += [Text(""), Text(snap.throughput.rates_note, style="yellow")]
    if counts is not None:
        parts.append(Text(""))
        parts.append(Text(background_line(snap), style="dim"))
    return Group(*parts)


def background_line(snap: Snapshot) -> str:
    """The background counter in one line: state, cost, lag and the stated bound."""
    c = snap.counts
    if c is None:
        return "background count: not used"
    if c.background == "idle":
        return f"background count: idle (every count is under the cap of {c.cap})"
    line = f"background count: {c.background}"
    if c.cost_ms is not None and c.lag_s is not None:
        line += f", last took {c.cost_ms:.0f} ms, {fmt_age(c.lag_s)} behind this poll"
    line += f"; figures at most {fmt_age(c.max_lag_s)} old; budget {c.budget_ms / 1000:g} s"
    if c.error:
        line += f"; last attempt failed: {c.error}"
    return line
