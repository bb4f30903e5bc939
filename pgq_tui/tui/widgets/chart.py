"""Throughput chart: enqueued, completed and failed per second over the history window (plotext)."""

from __future__ import annotations

from textual_plotext import PlotextPlot

from pgq_tui.monitor.snapshot import Snapshot, ThroughputPoint
from pgq_tui.tui.quiet import changed, set_border

MIN_POINTS = 30


def trim_quiet_start(history: tuple[ThroughputPoint, ...]) -> tuple[ThroughputPoint, ...]:
    """Drop the all-zero seconds before the first activity (a fresh server), keeping at least 30 s,
    so a new demo's first minute is not squeezed into the right edge of a 5-minute axis."""
    first = next((i for i, p in enumerate(history) if p.enqueued or p.completed or p.failed), len(history))
    return history[max(0, min(first, len(history) - MIN_POINTS)) :]


class ThroughputChart(PlotextPlot, can_focus=True):
    PANEL = "throughput"

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.border_title = "6 Throughput /s"
        self._empty()

    def _empty(self) -> None:
        plt = self.plt
        plt.clear_figure()
        plt.title("waiting for data…")

    def update_from(self, snap: Snapshot, filter_text: str = "") -> None:
        error = snap.errors.get(self.PANEL)
        self.set_class(error is not None, "-stale")
        set_border(self, subtitle=f"STALE: {error[:60]}" if error else "")
        if error is not None:
            return
        hist = trim_quiet_start(snap.throughput.history)
        now = snap.server.now
        # x is "seconds ago" so the axis reads the same whatever the wall clock says.
        xs = [round((p.at - now).total_seconds()) for p in hist]
        t = snap.throughput.total
        title = f"in {t.enqueued:.0f}/s  done {t.completed:.0f}/s  failed {t.failed:.1f}/s"
        if snap.throughput.foreign:
            title += "  · foreign writers: rates from the table"
        series = [tuple(getattr(p, k) for p in hist) for k in ("enqueued", "completed", "failed")]
        if not changed(self, "plot", (tuple(xs), tuple(series), title)):
            return  # an idle queue's chart: the same picture, nothing to send
        plt = self.plt
        plt.clear_figure()
        unsupported = snap.unsupported.get(self.PANEL)
        if unsupported is not None:
            plt.title(f"unsupported: {unsupported}"[:80])
            self.refresh()
            return
        if not hist:
            plt.title("no throughput yet")
            self.refresh()
            return
        plt.plot(xs, list(series[0]), label="enqueued", color="cyan", marker="braille")
        plt.plot(xs, list(series[1]), label="completed", color="green", marker="braille")
        plt.plot(xs, list(series[2]), label="failed", color="red", marker="braille")
        plt.title(title)
        plt.xlabel("seconds ago")
        plt.ylim(0, None)
        self.refresh()
