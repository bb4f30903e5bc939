"""PanelTable: a DataTable that re-renders from rows each poll without losing cursor, scroll or marks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.coordinate import Coordinate
from textual.events import Resize
from textual.widgets import DataTable
from textual.widgets.data_table import RowKey

from pgq_tui.jobid import JobId
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.tui.quiet import changed, forget, set_border, signature

MARK = "●"


@dataclass(frozen=True)
class Column:
    label: str
    width: int | None = None  # None: the flexible column, sized to what is left (see flex_width)
    wide_only: bool = False  # dropped when the terminal is narrow
    right: bool = False  # numbers: header aligned with the values
    key: str | None = None  # the column's key when its label may not be unique (default: the label)


@dataclass(frozen=True)
class Row:
    key: str
    cells: tuple[Any, ...]  # one per visible column (wide_only ones already dropped by the panel)
    target: JobId | None = None  # what an action acts on: a job id, a backend pid (int) or a queue name
    job_id: JobId | None = None  # `enter` opens the detail screen for this job
    info: object | None = None  # or the Snapshot object behind the row (a session), shown by `enter`


class PanelTable(DataTable[Any]):
    """Subclasses define COLUMNS, TITLE and `rows(snapshot, filter_text)`."""

    TITLE = ""
    PANEL = ""  # the Snapshot.errors key that makes this panel stale
    COLUMNS: tuple[Column, ...] = ()
    MARKABLE = False
    EMPTY = "nothing here"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kwargs)
        self.wide = True
        self.marked: set[str] = set()
        self._panel_rows: dict[str, Row] = {}
        self._stale: str | None = None
        self.border_title = self.TITLE
        self._snapshot: Snapshot | None = None
        self._filter = ""

    # -- what subclasses implement ---------------------------------------------------------------
    def build_rows(self, snap: Snapshot, filter_text: str) -> Sequence[Row]:
        raise NotImplementedError

    def total(self, snap: Snapshot) -> int | None:
        """The true total when `rows` is capped for display (None: len(rows) is the total)."""
        return None

    def total_unknown(self, snap: Snapshot) -> bool:
        """The true total is not known (a list not landed yet): the title says "?", never 0."""
        return False

    # -- rendering -------------------------------------------------------------------------------
    def on_mount(self) -> None:
        self._set_columns()

    def visible_columns(self) -> list[Column]:
        return [c for c in self.COLUMNS if self.wide or not c.wide_only]

    def _set_columns(self) -> None:
        self.clear(columns=True)
        forget(self, "rows")  # the rows went with the columns: the next update must add them again
        if self.MARKABLE:
            self.add_column(" ", width=1, key="mark")
        for col in self.visible_columns():
            label = Text(col.label, justify="right" if col.right else "left")
            self.add_column(label, width=col.width, key=col.key or col.label)

    def flex_width(self) -> int:
        """Room left for the flexible column, so long text is cut with "…" instead of by the border."""
        pad = 2 * self.cell_padding
        used = sum((c.width or 0) + pad for c in self.visible_columns()) + (1 + pad if self.MARKABLE else 0)
        return max(12, self.size.width - used - pad)

    def full_width(self) -> int:
        """Cells needed to show every column (auto-width columns count as 20)."""
        cells = sum((c.width or 20) + 2 * self.cell_padding for c in self.COLUMNS)
        return cells + (1 + 2 * self.cell_padding if self.MARKABLE else 0) + 2  # + scrollbar

    def on_resize(self, event: Resize) -> None:
        # Each table decides from its own width: a right-hand grid column can be narrower than a
        # full-width panel on a small terminal.
        self.set_wide(event.size.width >= self.full_width())
        if self._snapshot is not None:  # the flexible column's text is cut to the new width
            self.update_from(self._snapshot, self._filter)

    def set_wide(self, wide: bool) -> None:
        if wide != self.wide:
            self.wide = wide
            self._set_columns()

    def update_from(self, snap: Snapshot, filter_text: str = "") -> None:
        """Re-render from `snap`, unless the monitor said this panel's query failed (then: stale)."""
        error = snap.errors.get(self.PANEL) if self.PANEL else None
        self.set_stale(error)
        if error is not None:
            return
        unsupported = snap.unsupported.get(self.PANEL) if self.PANEL else None
        if unsupported is not None:  # this queue's dialect cannot serve the panel: say why, not an error
            self._snapshot, self._filter = snap, filter_text
            self._render_rows([])
            self.border_title = f"{self.TITLE} (unsupported)"
            self.border_subtitle = Text(f"unsupported: {unsupported}"[:120])
            return
        self._snapshot, self._filter = snap, filter_text
        rows = list(self.build_rows(snap, filter_text))
        total = self.total(snap)
        self._render_rows(rows)
        if self.total_unknown(snap):
            shown = f"{len(rows)} of ?" if rows else "?"
        else:
            shown = f"{len(rows)}" if total is None or total == len(rows) else f"{len(rows)} of {total}"
        set_border(self, title=f"{self.TITLE} ({shown})")
        self._update_subtitle()

    def set_stale(self, error: str | None) -> None:
        self._stale = error
        self.set_class(error is not None, "-stale")
        self._update_subtitle()

    def subtitle_notes(self) -> list[str]:
        """Panel-specific notes for the border subtitle (e.g. what the count marks mean)."""
        return []

    def _update_subtitle(self) -> None:
        parts = [] if self._stale is not None else self.subtitle_notes()
        if self.marked:
            parts.append(f"{len(self.marked)} marked")
        if self._stale is not None:
            parts.append(f"STALE: {self._stale[:60]}")
        set_border(self, subtitle=Text(" · ".join(parts)) if parts else "")

    def _render_rows(self, rows: list[Row]) -> None:
        previous = self._panel_rows
        if not changed(self, "rows", tuple((r.key, r.cells) for r in rows)):
            self._panel_rows = {r.key: r for r in rows}  # same cells; keep the newest targets/info
            return  # nothing on screen would change: don't clear and repaint the table
        if [r.key for r in rows] == list(previous) and self._update_changed_cells(previous, rows):
            self._panel_rows = {r.key: r for r in rows}
            return
        cursor_key = self.cursor_key()
        scroll_y = self.scroll_y
        self._panel_rows = {r.key: r for r in rows}
        self.marked &= set(self._panel_rows)  # a row that left (finished, requeued) cannot stay marked
        self.clear()
        for row in rows:
            cells = row.cells
            if self.MARKABLE:
                cells = (self._mark_cell(row.key), *cells)
            self.add_row(*cells, key=row.key)
        if cursor_key in self._panel_rows:
            self.move_cursor(row=self.get_row_index(cursor_key), scroll=False)
        self.scroll_to(y=scroll_y, animate=False, immediate=True)

    def _update_changed_cells(self, previous: dict[str, Row], rows: list[Row]) -> bool:
        """Same rows in the same order (a lease's seconds ticking, a count moving): repaint only the
        cells that changed instead of the whole table. DataTable.update_cell() would repaint all of
        it, so this sets the cell and refreshes its region the way DataTable does internally; if
        that internal shape is not there (another Textual), False: the caller refills the table."""
        data = getattr(self, "_data", None)
        if not isinstance(data, dict) or not isinstance(getattr(self, "_update_count", None), int):
            return False
        columns = list(self.columns)
        offset = 1 if self.MARKABLE else 0
        try:
            for y, row in enumerate(rows):
                before = previous[row.key].cells
                row_data = data[RowKey(row.key)]
                for x, cell in enumerate(row.cells):
                    if x < len(before) and signature(before[x]) == signature(cell):
                        continue
                    if x + offset >= len(columns) or self.columns[columns[x + offset]].auto_width:
                        return False  # an auto-sized column may need to grow: refill
                    row_data[columns[x + offset]] = cell
                    self._update_count += 1  # DataTable's render caches are keyed on it
                    self.refresh_coordinate(Coordinate(y, x + offset))
        except (KeyError, AttributeError, IndexError):
            return False
        return True

    def _mark_cell(self, key: str) -> Text:
        return Text(MARK if key in self.marked else " ", style="bold magenta")

    # -- cursor and marks ------------------------------------------------------------------------
    def cursor_key(self) -> str | None:
        if not self.row_count:
            return None
        try:
            return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        except Exception:  # cursor outside the table after a shrink
            return None

    def cursor_row_data(self) -> Row | None:
        key = self.cursor_key()
        return self._panel_rows.get(key) if key is not None else None

    def toggle_mark(self) -> None:
        key = self.cursor_key()
        if key is None or not self.MARKABLE:
            return
        self.marked ^= {key}
        self.update_cell(key, "mark", self._mark_cell(key))
        self._update_subtitle()
        if self.cursor_row < self.row_count - 1:  # like mutt/htop: mark and move on
            self.move_cursor(row=self.cursor_row + 1)

    def clear_marks(self) -> None:
        for key in list(self.marked):
            if key in self._panel_rows:
                self.update_cell(key, "mark", Text(" "))
        self.marked.clear()
        self._update_subtitle()

    def targets(self) -> list[JobId]:
        """Marked rows' targets, else the cursor row's; each target once, in table order."""
        keys = [k for k in self._panel_rows if k in self.marked] or [k for k in [self.cursor_key()] if k]
        out: list[JobId] = []
        for k in keys:
            t = self._panel_rows[k].target
            if t is not None and t not in out:
                out.append(t)
        return out


QUEUE_PREFIX = "queue:"


def queue_filter(name: str) -> str:
    """The filter that selects exactly one queue (what enter on a queue sets)."""
    return QUEUE_PREFIX + name


def selected_queue(filter_text: str) -> str | None:
    """The queue an exact `queue:NAME` filter selects, else None."""
    return filter_text[len(QUEUE_PREFIX) :] if filter_text.startswith(QUEUE_PREFIX) else None


def matches(filter_text: str, *fields: object, queue: str | None = None) -> bool:
    """Case-insensitive substring match of the filter against any field (empty filter: all).

    `queue:NAME` selects exactly that queue: a row of queue `mail_bulk` never matches `queue:mail`,
    so marked rows can't spill into another queue. Rows that belong to no queue (sessions: `queue`
    not given) are not narrowed by it.

    >>> matches("queue:mail", 7, queue="mail"), matches("queue:mail", 7, queue="mail_bulk")
    (True, False)
    >>> matches("mail", queue="mail_bulk"), matches("queue:mail", "pid 12")
    (False, True)
    """
    if not filter_text:
        return True
    exact = selected_queue(filter_text)
    if exact is not None:
        return queue is None or queue == exact
    needle = filter_text.lower()
    return any(needle in str(f).lower() for f in fields if f is not None)
