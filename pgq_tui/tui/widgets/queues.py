"""Queues panel: depth by state, oldest-ready latency against thresholds, and a throughput sparkline."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from pgq_tui.monitor.health import Thresholds, fmt_figure
from pgq_tui.monitor.snapshot import EXACT, QueueStats, Rates, Snapshot
from pgq_tui.tui.format import fmt_age, fmt_rate, level, leveled, safe, sparkline
from pgq_tui.tui.widgets.table import Column, PanelTable, Row, matches

# Oldest ready job waiting this long: workers are not keeping up. Same thresholds as the verdicts.
LATENCY_WARN_S = Thresholds().latency_warn_s
LATENCY_CRIT_S = Thresholds().latency_crit_s


def _num(q: QueueStats, name: str, style: str = "") -> Text:
    """A count with its mark: "≥" over the cap and not counted yet, "*" exact as of an earlier
    background count (its age is in the panel's subtitle), "~" an estimate."""
    n = getattr(q, name)
    accuracy = q.accuracy(name)
    shown = style if n or accuracy != EXACT else "dim"
    return Text(
        fmt_figure(n, accuracy), style=shown + ("" if accuracy == EXACT else " italic"), justify="right"
    )


def _rate(rates: Rates | None, name: str) -> Text:
    """A rate; "~" when it is a bound-limited estimate, "*" when stale, "≥" a lower bound."""
    value = getattr(rates, name) if rates is not None else None
    figure = rates.figures.get(name) if rates is not None else None
    mark = {"approximate": "~", "at_least": "≥"}.get(figure.accuracy, "") if figure is not None else ""
    stale = "*" if figure is not None and figure.accuracy == "stale" else ""
    return Text(f"{mark}{fmt_rate(value)}{stale}" if value is not None else "—", justify="right")


def count_notes(snap: Snapshot) -> list[str]:
    """What the marks mean right now, for the panel's subtitle."""
    marks = {a for q in snap.queues for a in (q.accuracy(n) for n in q.figures)}
    notes = []
    c = snap.counts
    if "stale" in marks and c is not None and c.lag_s is not None:
        notes.append(f"* exact {fmt_age(c.lag_s)} ago")
    if "at_least" in marks and c is not None:
        notes.append(f"≥ over {c.cap}, counting")
    if "approximate" in marks:
        notes.append("~ estimate")
    return notes


_COUNTS = (
    ("ready", ""),
    ("scheduled", ""),
    ("running", ""),
    ("expired", "bold red"),
    ("failed", "yellow"),
    ("done", ""),
)


class QueuesTable(PanelTable):
    TITLE = "1 Queues"
    PANEL = "queues"
    COLUMNS = (
        Column("queue", 12),
        Column("ready", 6, right=True),
        Column("sched", 5, right=True),
        Column("run", 4, right=True),
        Column("stuck", 5, right=True),
        Column("dead", 5, right=True),
        Column("done", 5, right=True),
        Column("wait", 8),
        Column("done/s", 7, wide_only=True, right=True),
        Column("in/s", 7, wide_only=True, right=True),
        Column("trend", 8),
    )

    def build_rows(self, snap: Snapshot, filter_text: str) -> Sequence[Row]:
        stale_rates = "throughput" in snap.errors
        out = []
        for q in snap.queues:
            if not matches(filter_text, q.queue):
                continue
            lvl = level(q.oldest_ready_age_s, LATENCY_WARN_S, LATENCY_CRIT_S)
            rates = snap.throughput.per_queue.get(q.queue)
            spark = sparkline(snap.throughput.queue_history.get(q.queue, ()), width=8)
            cells: list[object] = [
                safe(q.queue, style="bold", limit=12),
                *(
                    Text("n/a", style="dim", justify="right")
                    if name in snap.unsupported  # this queue's kind cannot count it (see its help)
                    else _num(q, name, style)
                    for name, style in _COUNTS
                ),
                Text("n/a", style="dim")
                if "oldest_ready" in snap.unsupported
                else leveled(fmt_age(q.oldest_ready_age_s), lvl)
                if q.ready
                else Text("—", style="dim"),
            ]
            if self.wide:
                cells.append(_rate(rates, "completed"))
                cells.append(_rate(rates, "enqueued"))
            cells.append(Text(spark, style="dim" if stale_rates else "cyan"))
            out.append(Row(key=f"q:{q.queue}", cells=tuple(cells), target=q.queue))
        return out

    def subtitle_notes(self) -> list[str]:
        snap = self._snapshot
        return count_notes(snap) if snap is not None else []
