"""The queues panel's latency columns (wide terminals): each queue's p95 wait and p95 run over the
last 5 minutes (monitor/latency.py), marked like the counts: "*" a background pass's (exact then, its
age in the subtitle), "~" over the newest jobs only, "?" not taken (the `v` screen and the JSON say
why), "n/a" the kind times no jobs. Pure: a Snapshot in, cells out."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from pgq_tui.monitor.latency import span_of
from pgq_tui.monitor.snapshot import APPROXIMATE, UNSUPPORTED, Snapshot
from pgq_tui.tui.format import fmt_age
from pgq_tui.tui.widgets.table import Column

MIN_TERMINAL = 120  # columns: below it the panel keeps its 80-column layout
WAIT, RUN = "wait95", "run95"
COLUMNS = (Column(WAIT, 6, right=True), Column(RUN, 6, right=True))


def cells(snap: Snapshot, queue: str) -> dict[str, Text]:
    """The queue's wait95 and run95 cells."""
    span = span_of(snap.latency, queue, "5m")
    out = {}
    for key, side in ((WAIT, span.wait), (RUN, span.run)):
        if span.figure.accuracy == UNSUPPORTED:
            out[key] = Text("n/a", style="dim", justify="right")
        elif side is None or side.p95 is None:
            out[key] = Text("?", style="yellow", justify="right")
        else:
            mark = "~" if span.figure.accuracy == APPROXIMATE else ""
            out[key] = Text(f"{mark}{fmt_age(side.p95)}*", style="italic", justify="right")
    return out


def note(snap: Snapshot) -> str | None:
    """The subtitle's word on them: the pass's age, or why there are none."""
    latency = snap.latency
    if latency is None or latency.unsupported:
        return None
    if latency.as_of is None:
        return f"{WAIT}/{RUN}: {latency.reason or 'not read'}"
    age = max(0.0, (snap.server.now - latency.as_of).total_seconds())
    failed = f", last pass failed: {latency.error}" if latency.error else ""
    return f"{WAIT}/{RUN}: p95 of the last 5 min, read {fmt_age(age)} ago{failed}"


def provenance(snap: Snapshot, queue: str) -> Group:
    """The `v` screen's lines: each span's wait and run percentiles with how they were read."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(no_wrap=True)
    grid.add_column()
    for name in ("5m", "1h"):
        span = span_of(snap.latency, queue, name)
        how = span.figure.reason or ""
        if span.figure.as_of is not None:
            age = max(0.0, (snap.server.now - span.figure.as_of).total_seconds())
            jobs = f"{span.jobs} finished jobs, " if span.jobs else ""
            how = f"{jobs}a background pass {fmt_age(age)} ago" + (f"; {how}" if how else "")
        for side, p in (("wait", span.wait), ("run", span.run)):
            shown = (
                " ".join(
                    f"{k} {fmt_age(getattr(p, k))}"
                    for k in ("p50", "p95", "p99", "max")
                    if getattr(p, k) is not None
                )
                if p is not None
                else "?"
            )
            grid.add_row(Text(f"{side} {name}"), Text(shown), Text(how, style="dim"))
    return Group(
        Text(""),
        Text("wait (due -> started) and run (started -> finished) of finished jobs", style="dim"),
        grid,
    )
