"""The table-health panel's bloat lines: claim cost per claim with its trend (sparkline), the
autovacuum pacing verdict in short, and an xmin-horizon block (who holds it) when vacuum is stuck."""

from __future__ import annotations

from rich.text import Text

from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.tui.format import fmt_count, safe, sparkline

LEVEL_STYLE = {"ok": "green", "warn": "bold yellow", "crit": "bold red"}
_SHORT = {
    "naptime": "naptime is the limiter",
    "threshold": "threshold is the limiter",
    "workers": "no free autovacuum worker",
    "cannot keep up": "vacuum cannot keep up",
    "disabled": "autovacuum off",
    "idle": "no dead tuples being made",
}


def bloat_text(snap: Snapshot, width: int = 24) -> Text:
    """Two lines (three with an xmin block); empty when the monitor collected no bloat report."""
    b = snap.bloat
    out = Text()
    if b is None:
        return out
    p = b.probe
    out.append("\nclaim cost ")
    latest = p.latest
    if latest is None:
        why = p.error or ("waiting for the first probe" if p.queue or p.interval_s > 0 else "probe off")
        out.append_text(safe(why, style="dim"))
    else:
        style = LEVEL_STYLE[p.level]
        out.append(sparkline([q.buffers for q in p.history], width=width), style=style)
        ratio = f" ({p.ratio:.1f}x floor {p.floor})" if p.ratio is not None else ""
        out.append(f" {latest.buffers} buffers/claim{ratio}", style=style)
        out.append(f" {latest.ms:.2f} ms", style="dim")
        out.append_text(safe(f"  queue {p.queue}, every {p.interval_s:g}s", style="dim"))
    pace = b.pacing
    if pace is not None:
        out.append("\npacing ")
        out.append(_SHORT.get(pace.limiter, pace.limiter), style=LEVEL_STYLE[pace.level])
        if pace.dead_per_s:
            out.append(f"  {fmt_count(pace.dead_per_s)} dead/s")
        if pace.fill_s is not None:
            out.append(f", threshold fills in {pace.fill_s:.0f}s")
        if b.settings is not None:
            out.append(f", naptime {b.settings.naptime_s:g}s")
        if pace.predicted_peak is not None:
            out.append(f"  peak ~{fmt_count(pace.predicted_peak)}", style=LEVEL_STYLE[pace.level])
        if pace.vacuum_s is not None:
            out.append(f"  vacuum {pace.vacuum_s:.1f}s", style="dim")
    if b.xmin_block is not None:
        out.append("\n")
        out.append_text(safe(b.xmin_block.message, style="bold red"))
    return out
