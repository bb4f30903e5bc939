"""Throughput chart: enqueued, completed and failed per second over a window of 1 min, 10 min or 1 h
(`c` cycles it), from the dashboard's in-memory history (pgq_tui.history.series) or, in replay, from
the recorded polls before the cursor."""

from __future__ import annotations

from datetime import datetime

from textual_plotext import PlotextPlot

from pgq_tui.history.series import WINDOWS, History, Sample, series
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.tui.quiet import changed, set_border

MIN_POINTS = 30
DEFAULT_WINDOW = 1  # 10 min: the monitor's own per-second history covers the first minutes


def trim_quiet_samples(samples: list[Sample]) -> list[Sample]:
    """Drop the all-zero samples before the first activity (a fresh server), keeping at least 30,
    so a new demo's first minute is not squeezed into the right edge of a 10-minute axis."""
    first = next((i for i, s in enumerate(samples) if s.enqueued or s.completed or s.failed), len(samples))
    return samples[max(0, min(first, len(samples) - MIN_POINTS)) :]


def y_ticks(top: float) -> tuple[list[float], list[str]] | None:
    """Ticks for an all-zero chart, where plotext would label 0.50 over 1.00 (and no 0).

    >>> y_ticks(0.0)
    ([0.0, 1.0], ['0', '1'])
    >>> y_ticks(5.0) is None
    True
    """
    return ([0.0, 1.0], ["0", "1"]) if top <= 0 else None


class ThroughputChart(PlotextPlot, can_focus=True):
    PANEL = "throughput"

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.history = History()
        self.window = DEFAULT_WINDOW
        self.border_title = self._title()
        self._last: Snapshot | None = None
        self._until: datetime | None = None  # replay: the cursor's time (None: the newest sample)
        self._empty()

    def _title(self) -> str:
        return f"6 Throughput /s · {WINDOWS[self.window][0]}"

    def _empty(self) -> None:
        plt = self.plt
        plt.clear_figure()
        plt.title("waiting for data…")

    def cycle_window(self, index: int) -> None:
        self.window = index
        self.border_title = self._title()
        if self._last is not None:
            self.update_from(self._last)

    def show_until(self, until: datetime | None) -> None:
        """Replay: draw the window that ends at the cursor (the history holds polls past it too)."""
        self._until = until

    def update_from(self, snap: Snapshot, filter_text: str = "") -> None:
        self._last = snap
        if self._until is None:
            self.history.add(snap)
        error = snap.errors.get(self.PANEL)
        self.set_class(error is not None, "-stale")
        set_border(self, subtitle=f"STALE: {error[:60]}" if error else "")
        if error is not None:
            return
        until = self._until or snap.server.now
        samples = trim_quiet_samples(self.history.window(WINDOWS[self.window][1], until))
        # x is "seconds ago" so the axis reads the same whatever the wall clock says.
        lines = series(samples, until)
        t = snap.throughput.total
        title = f"in {_rate(t.enqueued)}/s  done {_rate(t.completed)}/s  failed {_rate(t.failed, 1)}/s"
        if snap.throughput.foreign:
            title += "  · foreign writers: rates from the table"
        picture = (tuple((tuple(x), tuple(y)) for x, y in lines.values()), title, self.window)
        if not changed(self, "plot", picture):
            return  # an idle queue's chart: the same picture, nothing to send
        plt = self.plt
        plt.clear_figure()
        unsupported = snap.unsupported.get(self.PANEL)
        if unsupported is not None:
            plt.title(f"unsupported: {unsupported}"[:80])
            self.refresh()
            return
        if not samples:
            plt.title("no throughput yet")
            self.refresh()
            return
        colors = {"enqueued": "cyan", "completed": "green", "failed": "red"}
        for name, (xs, ys) in lines.items():
            if xs:
                plt.plot(xs, ys, label=name, color=colors[name], marker="braille")
        plt.title(title)
        plt.xlabel("seconds ago")
        plt.ylim(0, None)
        ticks = y_ticks(max((max(ys) for _, ys in lines.values() if ys), default=0.0))
        if ticks is not None:
            plt.ylim(0, 1)
            plt.yticks(*ticks)
        self.refresh()


def _rate(value: float | None, digits: int = 0) -> str:
    return "?" if value is None else f"{value:.{digits}f}"
