"""Throughput chart: enqueued, completed and failed per second over a window of 1 min, 10 min or 1 h
(`c` cycles it), from the dashboard's in-memory history (pgq_tui.history.series) or, in replay, from
the recorded polls before the cursor."""

from __future__ import annotations

from datetime import datetime

from textual.app import RenderResult
from textual_plotext import PlotextPlot

from pgq_tui.history.series import WINDOWS, History, Sample, series
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.tui.quiet import changed, set_border, signature

MIN_POINTS = 30
DEFAULT_WINDOW = 1  # 10 min: the monitor's own per-second history covers the first minutes
# The x axis' extents: the smallest that holds the samples, at most the window. Fixed steps, so the
# axis is not relabelled at every poll while the window fills (it was the samples' own span,
# -32.3 ... 0.0, a new label set each poll: the whole chart repainted over an idle queue).
SPANS = (60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)


def trim_quiet_samples(samples: list[Sample]) -> list[Sample]:
    """Drop the all-zero samples before the first activity (a fresh server), keeping at least 30,
    so a new demo's first minute is not squeezed into the right edge of a 10-minute axis."""
    first = next((i for i, s in enumerate(samples) if s.enqueued or s.completed or s.failed), len(samples))
    return samples[max(0, min(first, len(samples) - MIN_POINTS)) :]


def x_span(oldest_s: float, window_s: float) -> float:
    """The x axis' extent in seconds for samples reaching `oldest_s` seconds back.

    >>> x_span(32.3, 600.0), x_span(61.0, 600.0), x_span(599.0, 600.0), x_span(2000.0, 600.0)
    (60.0, 120.0, 600.0, 600.0)
    >>> x_span(10.0, 60.0)
    60.0
    """
    return min(window_s, next((s for s in SPANS if s >= oldest_s), SPANS[-1]))


def x_ticks(span: float) -> tuple[list[float], list[str]]:
    """Five ticks from -span to now, labelled in whole seconds or minutes.

    >>> x_ticks(60.0)
    ([-60.0, -45.0, -30.0, -15.0, 0.0], ['-60s', '-45s', '-30s', '-15s', 'now'])
    >>> x_ticks(600.0)[1]
    ['-10m', '-7.5m', '-5m', '-2.5m', 'now']
    """
    at = [span * (i - 4) / 4 for i in range(5)]

    def label(x: float) -> str:
        if x == 0:
            return "now"
        if span < 300:
            return f"{x:.0f}s"
        minutes = x / 60
        return f"{minutes:.0f}m" if minutes == int(minutes) else f"{minutes:.1f}m"

    return at, [label(x) for x in at]


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
        self._drawn = 0  # bumped at each new figure: the built picture below is then out of date
        self._built: tuple[tuple[object, ...], RenderResult] | None = None
        self._empty()

    def render(self) -> RenderResult:
        """The figure built once per figure and size (plotext builds it anew on each call)."""
        key = (self.size.width, self.size.height, self.app.theme, self._drawn)
        if self._built is None or self._built[0] != key:
            self._built = (key, super().render())
        return self._built[1]

    def _repaint(self) -> None:
        """Refresh only when the new figure looks different at this size: an idle queue's samples move
        by fractions of a pixel, and a refresh repaints every line of the chart."""
        before = self._built[1] if self._built is not None else None
        self._drawn += 1
        if before is None or signature(self.render()) != signature(before):
            self.refresh()

    def _title(self) -> str:
        return f"6 Throughput /s · {WINDOWS[self.window][0]}"

    def _empty(self) -> None:
        plt = self.plt
        plt.clear_figure()
        plt.title("waiting for data…")
        self._drawn += 1

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
            self._repaint()
            return
        if not samples:
            plt.title("no throughput yet")
            self._repaint()
            return
        colors = {"enqueued": "cyan", "completed": "green", "failed": "red"}
        for name, (xs, ys) in lines.items():
            if xs:
                plt.plot(xs, ys, label=name, color=colors[name], marker="braille")
        plt.title(title)
        oldest = max((-min(xs) for xs, _ in lines.values() if xs), default=0.0)
        span = x_span(oldest, WINDOWS[self.window][1])
        plt.xlim(-span, 0)
        plt.xticks(*x_ticks(span))
        plt.ylim(0, None)
        ticks = y_ticks(max((max(ys) for _, ys in lines.values() if ys), default=0.0))
        if ticks is not None:
            plt.ylim(0, 1)
            plt.yticks(*ticks)
        self._repaint()


def _rate(value: float | None, digits: int = 0) -> str:
    return "?" if value is None else f"{value:.{digits}f}"
