"""Table-health panel: dead tuples against the effective autovacuum threshold, vacuum history and
progress, then the claim cost, the autovacuum pacing verdict and an xmin block (bloat_text.py)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.tui.format import fmt_ago, fmt_bytes, fmt_count, safe
from pgq_tui.tui.quiet import set_border, update_static
from pgq_tui.tui.widgets.bloat_text import bloat_text


def bar(fraction: float, width: int = 20) -> str:
    """A text progress bar.

    >>> bar(0.5, 10)
    '█████░░░░░'
    """
    filled = max(0, min(width, round(fraction * width)))
    return "█" * filled + "░" * (width - filled)


def health_text(snap: Snapshot) -> Text:
    t = snap.table
    now = snap.server.now
    threshold = max(t.vacuum_threshold, 1.0)
    fraction = t.trigger_dead / threshold
    style = "green" if fraction < 1 else ("yellow" if fraction < 4 else "bold red")
    out = Text()
    out.append_text(safe(t.table, style="bold"))
    out.append(f"  live {fmt_count(t.live_tuples)}  dead {fmt_count(t.dead_tuples)} ({t.dead_ratio:.0%})")
    out.append(f"  heap {fmt_bytes(t.table_bytes)} + idx {fmt_bytes(t.index_bytes)}\n")
    if t.partitions:
        out.append(f"sum of {len(t.partitions)} partitions; worst ", style="dim")
        out.append_text(safe(t.worst_partition or "?", style="bold"))
        out.append("\n")
    out.append("dead vs autovacuum threshold ")
    out.append(bar(min(fraction, 1.0)), style=style)
    out.append(f" {fmt_count(t.trigger_dead)}/{fmt_count(t.vacuum_threshold)}", style=style)
    if not t.autovacuum_enabled:
        out.append("  autovacuum OFF", style="bold red")
    elif t.until_autovacuum <= 0:
        out.append("  due", style=style)
    else:
        out.append(f"  due in {fmt_count(t.until_autovacuum)}", style="dim")
    out.append(
        f"\n  threshold = {t.vacuum_base_threshold} + {t.vacuum_scale_factor:g} × reltuples "
        f"({fmt_count(t.total_rows_estimate)})\n",
        style="dim",
    )
    out.append(
        f"last autovacuum {fmt_ago(t.last_autovacuum, now)} (×{t.autovacuum_count})"
        f"  vacuum {fmt_ago(t.last_vacuum, now)} (×{t.vacuum_count})"
        f"  autoanalyze {fmt_ago(t.last_autoanalyze, now)}\n"
    )
    v = t.vacuum
    if v is None:
        out.append("vacuum: not running", style="dim")
    else:
        pct = "?" if v.percent is None else f"{v.percent:.0f}%"
        out.append(f"vacuum: pid {v.pid} {v.phase} {pct}", style="bold cyan")
        if v.percent is not None:
            out.append(" " + bar(v.percent / 100, 12), style="cyan")
    out.append_text(bloat_text(snap))
    return out


class HealthPanel(Static, can_focus=True):
    PANEL = "table"

    def __init__(self, **kwargs: object) -> None:
        super().__init__("waiting for data…", **kwargs)  # type: ignore[arg-type]
        self.border_title = "7 Table health"

    def update_from(self, snap: Snapshot, filter_text: str = "") -> None:
        error = snap.errors.get(self.PANEL)
        self.set_class(error is not None, "-stale")
        set_border(self, subtitle=f"STALE: {error[:60]}" if error else "")
        if error is None:
            update_static(self, health_text(snap))
