"""Queues panel: depth by state, oldest-ready latency against thresholds, and a throughput sparkline.

A dialect's labelled extra states (River's cancelled and pending, Solid Queue's blocked...) appear
only when the open queue has some: a column each after `done` when the panel has room for them,
else one shared column ("14c 3p", the letters spelled out in the border), which on a narrow panel
(80 columns) takes the sparkline's place."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.events import Resize

from pgq_tui.monitor.figures import oldest_accuracy
from pgq_tui.monitor.health import COUNT_MARK, Thresholds, fmt_count, fmt_figure, fmt_wait
from pgq_tui.monitor.snapshot import EXACT, STALE, UNKNOWN, UNSUPPORTED, QueueStats, Rates, Snapshot
from pgq_tui.tui.format import fmt_age, fmt_rate, level, leveled, safe, sparkline
from pgq_tui.tui.widgets import latency_cells
from pgq_tui.tui.widgets.table import Column, PanelTable, Row, matches

# Oldest ready job waiting this long: workers are not keeping up. Same thresholds as the verdicts.
LATENCY_WARN_S = Thresholds().latency_warn_s
LATENCY_CRIT_S = Thresholds().latency_crit_s


def _num(q: QueueStats, name: str, style: str = "", *, extra: bool = False) -> Text:
    """A count (a canonical one, or with `extra` a labelled extra state) with its mark: "≥" over the
    cap and not counted yet, "*" exact as of an earlier background count (its age is in the panel's
    subtitle), "~" an estimate."""
    n = q.extra.get(name) if extra else getattr(q, name)
    accuracy = q.accuracy(name)
    if n is None or accuracy in (UNKNOWN, UNSUPPORTED):  # not taken: "?" (unknown) or "n/a", never 0
        style = "yellow" if accuracy == UNKNOWN else "dim"
        return Text(fmt_figure(n, accuracy), style=style, justify="right")
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
    if UNKNOWN in marks:
        notes.append("? not counted (v says why)")
    c = snap.counts
    if "stale" in marks:  # each figure's own as_of: a background count's, or the framework's own count's
        ages = [
            age
            for q in snap.queues
            for f in q.figures.values()
            if (age := f.stale_age_s(snap.server.now)) is not None
        ]
        if ages and max(ages) - min(ages) >= 1:
            notes.append(f"* exact {fmt_age(min(ages))}-{fmt_age(max(ages))} ago")
        elif ages:
            notes.append(f"* exact {fmt_age(max(ages))} ago")
    if "at_least" in marks and c is not None:
        notes.append(f"≥ over {c.cap}, counting")
    if "approximate" in marks:
        notes.append("~ estimate")
    if "unknown" in marks:
        notes.append("? scanning in the background")
    return notes


# -- extra states ----------------------------------------------------------------------------------
def extra_labels(snap: Snapshot) -> tuple[str, ...]:
    """The open queue's extra states, in the order the monitor reports them."""
    return tuple(dict.fromkeys(label for q in snap.queues for label in q.extra))


def abbreviations(labels: Sequence[str]) -> dict[str, str]:
    """Each label's shortest prefix that no other label starts with.

    >>> abbreviations(["cancelled", "pending"]), abbreviations(["cancelled", "canceling", "blocked"])
    ({'cancelled': 'c', 'pending': 'p'}, {'cancelled': 'cancell', 'canceling': 'canceli', 'blocked': 'b'})
    """
    out = {}
    for label in labels:
        n = 1
        while n < len(label) and any(o != label and o.startswith(label[:n]) for o in labels):
            n += 1
        out[label] = label[:n]
    return out


def folded(counts: Sequence[tuple[float | None, str, str]]) -> str:
    """Several extra counts (value, accuracy, abbreviation) in one cell: those not exactly 0.

    >>> folded([(14, "stale", "c"), (0, "exact", "p"), (1200, "at_least", "b")])
    '14c* ≥1.2kb'
    >>> folded([(0, "exact", "c")]), folded([(None, "unknown", "c"), (2, "exact", "p")])
    ('0', '?c 2p')
    """
    parts = []
    for n, accuracy, short in counts:
        if n is None or accuracy in (UNKNOWN, UNSUPPORTED):
            parts.append(f"{fmt_figure(n, accuracy)}{short}")
        elif n or accuracy != EXACT:
            mark = COUNT_MARK.get(accuracy, "?")
            text = fmt_count(n)
            parts.append(f"{text}{short}{mark}" if accuracy == STALE else f"{mark}{text}{short}")
    return " ".join(parts) or "0"


_COUNTS = (
    ("ready", ""),
    ("scheduled", ""),
    ("running", ""),
    ("stuck", "bold red"),
    ("dead", "yellow"),
    ("done", ""),
)
COUNT_COLUMNS = ("ready", "sched", "run", "stuck", "dead", "done")  # their columns, in _COUNTS' order
FOLDED = "x:folded"  # the key of the shared extra-states column


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
    FOLD_WIDTH = 8  # the sparkline's width: on a narrow panel one gives way to the other

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.extras: tuple[str, ...] = ()  # the open queue's extra states (from the last snapshot)
        self.shown_keys: tuple[str, ...] = ()  # the keys of the columns shown, in order
        self._timed = False  # the last snapshot has latency figures (the p95 columns' condition)

    # -- columns -----------------------------------------------------------------------------------
    def visible_columns(self) -> list[Column]:
        shown = super().visible_columns()
        shown = self._with_latency(shown)
        if not self.extras:
            return shown
        after = [c.label for c in shown].index("done") + 1
        per_state = [Column(x[:9], max(5, min(9, len(x))), right=True, key=f"x:{x}") for x in self.extras]
        spare = self.size.width - self._cells(shown)
        if len(self.extras) > 1 and spare >= self._cells(per_state):
            return [*shown[:after], *per_state, *shown[after:]]
        if len(self.extras) == 1:
            one = Column(self.extras[0][: self.FOLD_WIDTH], self.FOLD_WIDTH, right=True, key=FOLDED)
        else:
            one = Column("other", self.FOLD_WIDTH, right=True, key=FOLDED)
        if spare < self._cells([one]):
            shown = [c for c in shown if c.label != "trend"]
        return [*shown[:after], one, *shown[after:]]

    def _with_latency(self, shown: list[Column]) -> list[Column]:
        """The p95 columns after the wait, on a terminal of MIN_TERMINAL columns or more, for a queue
        whose kind times its jobs (a snapshot without latency figures, a replay of an older recording,
        keeps the panel as it was); the trend, then in/s and done/s give way while the panel has no
        room for them (the throughput chart shows the same)."""
        snap = self._snapshot
        terminal = self.app.size.width if self.is_attached else 0
        latency = snap.latency if snap is not None else None
        if terminal < latency_cells.MIN_TERMINAL or latency is None or latency.unsupported:
            return shown
        at = next((i for i, c in enumerate(shown) if c.label == "wait"), len(shown) - 1) + 1
        out = [*shown[:at], *latency_cells.COLUMNS, *shown[at:]]
        for label in ("trend", "in/s", "done/s"):
            if self.size.width >= self._cells(out):
                break
            out = [c for c in out if c.label != label]
        return out

    def _cells(self, columns: Sequence[Column]) -> int:
        """Cells the columns take, with a vertical scrollbar's worth to spare (as full_width)."""
        return sum((c.width or 20) + 2 * self.cell_padding for c in columns) + 2

    def _set_columns(self) -> None:
        self.shown_keys = tuple(c.key or c.label for c in self.visible_columns())
        super()._set_columns()

    def _relayout(self) -> None:
        if tuple(c.key or c.label for c in self.visible_columns()) != self.shown_keys:
            self._set_columns()

    def on_resize(self, event: Resize) -> None:
        # Textual then runs PanelTable.on_resize too (handlers run down the MRO): it re-renders
        self.set_wide(event.size.width >= self.full_width())
        self._relayout()  # the extra states' columns depend on the width, not only on `wide`

    def update_from(self, snap: Snapshot, filter_text: str = "") -> None:
        extras = extra_labels(snap)
        timed = snap.latency is not None and not snap.latency.unsupported
        if extras != self.extras or timed != self._timed:  # another kind of queue: other columns
            self.extras, self._timed = extras, timed
            self._snapshot = snap  # the columns depend on it (_with_latency)
            self._relayout()
        super().update_from(snap, filter_text)

    # -- rows --------------------------------------------------------------------------------------
    def build_rows(self, snap: Snapshot, filter_text: str) -> Sequence[Row]:
        stale_rates = "throughput" in snap.errors
        short = abbreviations(self.extras)
        out = []
        for q in snap.queues:
            if not matches(filter_text, q.queue, queue=q.queue):
                continue
            lvl = level(q.oldest_ready_age_s, LATENCY_WARN_S, LATENCY_CRIT_S)
            wait = oldest_accuracy(snap, q)
            rates = snap.throughput.per_queue.get(q.queue)
            spark = sparkline(snap.throughput.queue_history.get(q.queue, ()), width=8)
            cells: dict[str, object] = {
                "queue": safe(q.queue, style="bold", limit=12),
                "wait": Text("paused", style="bold magenta")  # the framework's pause: not a stall
                if q.paused is True
                else Text("?", style="yellow")  # the kind has it, but it was not taken
                if wait == UNKNOWN
                else Text("n/a", style="dim")
                if wait == UNSUPPORTED
                else leveled(fmt_wait(q.oldest_ready_age_s, wait, coarse=True), lvl)  # "*": a scan's
                if q.ready or q.oldest_ready_age_s is not None
                else Text("—", style="dim"),
                "done/s": _rate(rates, "completed"),
                "in/s": _rate(rates, "enqueued"),
                "trend": Text(spark, style="dim" if stale_rates else "cyan"),
            }
            for (name, style), column in zip(_COUNTS, COUNT_COLUMNS, strict=True):
                # not taken: "?" when the kind has the state but it was not counted, "n/a" when the
                # kind has no such state (see its help)
                cells[column] = (
                    Text("n/a", style="dim", justify="right")
                    if name in snap.unsupported and name not in q.figures  # a snapshot built by hand
                    else _num(q, name, style)
                )
            cells.update(latency_cells.cells(snap, q.queue))
            for x in self.extras:
                cells[f"x:{x}"] = _num(q, x, extra=True)
            if len(self.extras) == 1:
                cells[FOLDED] = _num(q, self.extras[0], extra=True)
            elif self.extras:
                counts = [(q.extra.get(x), q.accuracy(x), short[x]) for x in self.extras]
                text = folded(counts)
                cells[FOLDED] = Text(text, style="dim" if text == "0" else "", justify="right")
            row = tuple(cells[k] for k in self.shown_keys)
            out.append(Row(key=f"q:{q.queue}", cells=row, target=q.queue))
        return out

    def subtitle_notes(self) -> list[str]:
        snap = self._snapshot
        notes = count_notes(snap) if snap is not None else []
        if snap is not None and any(q.paused is True for q in snap.queues):
            notes.append("paused: not claimed, U resumes")
        if snap is not None and latency_cells.WAIT in self.shown_keys and (said := latency_cells.note(snap)):
            notes.append(said)
        if FOLDED in self.shown_keys and len(self.extras) > 1:
            short = abbreviations(self.extras)
            notes.append("other: " + " ".join(f"{short[x]} {x}" for x in self.extras))
        return notes
