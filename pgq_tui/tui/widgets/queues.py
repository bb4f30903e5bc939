"""Queues panel: depth by state, oldest-ready latency against thresholds, and a throughput sparkline."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from pgq_tui.monitor.health import Thresholds
from pgq_tui.monitor.snapshot import QueueStats, Snapshot
from pgq_tui.tui.format import fmt_age, fmt_count, fmt_rate, level, leveled, safe, sparkline
from pgq_tui.tui.widgets.table import Column, PanelTable, Row, matches

# Oldest ready job waiting this long: workers are not keeping up. Same thresholds as the verdicts.
LATENCY_WARN_S = Thresholds().latency_warn_s
LATENCY_CRIT_S = Thresholds().latency_crit_s


def _num(n: int, style: str = "", approximate: bool = False) -> Text:
    return Text(fmt_count(n, approximate=approximate), style=style if n else "dim", justify="right")


def _approx(q: QueueStats, name: str) -> bool:
    """Is this count an estimate (above the monitor's cap)? "~" marks it."""
    fields = getattr(q, "approximate_fields", ())
    return name in fields if fields else q.approximate


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
                    else _num(getattr(q, name), style, approximate=_approx(q, name))
                    for name, style in _COUNTS
                ),
                Text("n/a", style="dim")
                if "oldest_ready" in snap.unsupported
                else leveled(fmt_age(q.oldest_ready_age_s), lvl)
                if q.ready
                else Text("—", style="dim"),
            ]
            if self.wide:
                cells.append(Text(fmt_rate(rates.completed) if rates else "—", justify="right"))
                cells.append(Text(fmt_rate(rates.enqueued) if rates else "—", justify="right"))
            cells.append(Text(spark, style="dim" if stale_rates else "cyan"))
            out.append(Row(key=f"q:{q.queue}", cells=tuple(cells), target=q.queue))
        return out
