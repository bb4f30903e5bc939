"""Rates from the framework's own timestamps (QueueModel.finished): done/s and failed/s per queue for
the kinds that keep finished rows with a timestamp (pg-boss completed_on, procrastinate's events,
pgqueuer's log, River finalized_at, Oban completed_at/discarded_at, Solid Queue finished_at), and
enqueued/s where the ids are not increasing integers (pg-boss created_on). Right whoever writes.

Each poll counts the rows whose timestamp falls in [previous poll - LAG_S, this poll - LAG_S): a
job's timestamp is its transaction's now(), and it commits a moment later, so the window trails the
polls by LAG_S for late commits to land in it. A row finished and deleted (or archived) within one
poll interval is not seen. Pure, but for the parameters' clock arithmetic.

Where no index serves the time range (QueueModel.finished_scans), the statement runs in the poll only
while those relations hold at most MAX_SCAN_PAGES pages (their size at the previous poll); above it the
rates are unknown, with the reason (Throughput.rates_note), never 0.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol

from psycopg import sql

from pgq_tui.dialects.contract import QueueModel, Statement
from pgq_tui.monitor import health
from pgq_tui.monitor.snapshot import EXACT, Figure, Rates

LAG_S = 1.0
# A sequential scan of 1,000 pages (~8 MB, ~50k small job rows) costs 1-3 ms here (docs/rates.md);
# PERF_NOTES measured 8-11 ms for 4,032 pages.
MAX_SCAN_PAGES = 1000
TIMESTAMPS = "timestamps"
NAMES = ("enqueued", "completed", "failed")
Counts = dict[str, tuple[int | None, int | None, int | None]]  # queue -> enqueued, completed, failed


class Poll(Protocol):
    @property
    def at(self) -> datetime: ...
    @property
    def windows_at(self) -> datetime | None: ...  # where its window ended (None: at)
    @property
    def finished(self) -> Counts | None: ...


def window_end(poll: Poll) -> datetime:
    return poll.windows_at or poll.at


def window_s(window: Sequence[Poll]) -> float | None:
    """The seconds the window's polls counted: from the first one's window end to the last one's."""
    return (window_end(window[-1]) - window_end(window[0])).total_seconds() if len(window) > 1 else None


def params(prev_at: datetime, now: datetime) -> dict[str, Any]:
    """The statement's window: since the previous poll, both ends LAG_S back."""
    lag = timedelta(seconds=LAG_S)
    return {"since": prev_at - lag, "until": now - lag}


def counts(rows: Iterable[Mapping[str, Any]], also: Iterable[str] = ()) -> Counts:
    """FINISHED_COLUMNS rows as queue -> (enqueued, completed, failed); several rows of a queue add up.
    Queues in `also` (the poll's queues) without a row had none: an exact 0.

    >>> counts([{"queue": "a", "enqueued": None, "completed": 3, "failed": 0},
    ...         {"queue": "a", "enqueued": None, "completed": 2, "failed": 1}], also=["b"])
    {'b': (0, 0, 0), 'a': (None, 5, 1)}
    """
    out: Counts = {q: (0, 0, 0) for q in also}
    for r in rows:
        prev = out.get(str(r["queue"]), (None, None, None))
        if prev == (0, 0, 0):
            prev = (None, None, None)
        out[str(r["queue"])] = tuple(  # type: ignore[assignment]
            None if a is None and r.get(n) is None else int(a or 0) + int(r.get(n) or 0)
            for a, n in zip(prev, NAMES, strict=True)
        )
    return out


def rates(window: Sequence[Poll], columns: frozenset[str]) -> dict[str, Rates] | None:
    """Per-queue rates over the window's polls (each poll's counts cover the time since the one
    before); None when a poll in it did not count (skipped, failed) or there is no window yet.
    `columns`: the rates the statement counts (a queue without rows had none of them).

    >>> from datetime import timezone
    >>> from types import SimpleNamespace as P
    >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> w = [P(at=t, windows_at=None, finished=None),
    ...      P(at=t + timedelta(seconds=2), windows_at=None, finished={"a": (None, 10, 2)}),
    ...      P(at=t + timedelta(seconds=4), windows_at=None, finished={})]
    >>> r = rates(w, frozenset(("completed", "failed")))["a"]
    >>> r.enqueued, r.completed, r.failed
    (None, 2.5, 0.5)
    """
    polls = list(window[1:])
    if not polls or any(p.finished is None for p in polls):
        return None
    dt = window_s(window)
    if dt is None or dt <= 0:
        return None
    as_of = window_end(window[-1]) - timedelta(seconds=LAG_S)
    out: dict[str, Rates] = {}
    for q in sorted({q for p in polls for q in (p.finished or {})}):
        values: dict[str, float | None] = {}
        figures: dict[str, Figure] = {}
        for i, name in enumerate(NAMES):
            if name not in columns:
                values[name] = None
                continue
            total = sum((p.finished or {}).get(q, (0, 0, 0))[i] or 0 for p in polls)
            values[name] = health.rate(total, dt)
            figures[name] = Figure(EXACT, as_of, TIMESTAMPS)
        failed = values["failed"]
        out[q] = Rates(values["enqueued"], values["completed"], failed, failed, figures)
    return out


def overlay(per_queue: Mapping[str, Rates], stamped: Mapping[str, Rates] | None) -> dict[str, Rates]:
    """The timestamps' figures over the other sources', rate by rate (they count every writer and
    need no exact depth); a queue the timestamps saw nothing of keeps its other figures."""
    out = dict(per_queue)
    for q, t in (stamped or {}).items():
        base = out.get(q)
        values = {n: getattr(base, n) if base is not None else None for n in (*NAMES, "dead")}
        figures = dict(base.figures) if base is not None else {}
        for name in NAMES:
            if name in t.figures:
                values[name], figures[name] = getattr(t, name), t.figures[name]
                if name == "failed":
                    values["dead"] = t.dead
        out[q] = Rates(values["enqueued"], values["completed"], values["failed"], values["dead"], figures)
    return dict(sorted(out.items()))


def skipped_note(pages: int, relations: Sequence[tuple[str, str]]) -> str:
    names = ", ".join(".".join(r) for r in relations)
    return (
        f"done/s and failed/s from the framework's timestamps: not counted, no index serves the scan of "
        f"{names} ({pages:,} pages > {MAX_SCAN_PAGES:,} read in the poll)"
    )


class Stamps:
    """The Monitor's side of QueueModel.finished: which statements a poll sends, and the counts it
    read (with the size of what the statement scans without an index, for the next poll's gate)."""

    def __init__(self, model: QueueModel) -> None:
        self.statement = model.finished
        self.scans = model.finished_scans
        cols = model.finished.columns if model.finished is not None else ()
        self.columns = frozenset(cols) & frozenset(NAMES)  # the rates it gives
        self.pages: int | None = None  # of `scans` at the last poll (None: not measured yet)
        self._pages_params = {"relations": [sql.Identifier(*r).as_string(None) for r in self.scans]}

    def due(self, prev_at: datetime | None) -> bool:
        """Count at this poll: a previous poll to count from, and a small enough scan."""
        if self.statement is None or prev_at is None:
            return False
        return not self.scans or (self.pages is not None and self.pages <= MAX_SCAN_PAGES)

    def statements(self, prev_at: datetime | None, now: datetime) -> list[tuple[Statement, dict[str, Any]]]:
        if not self.due(prev_at) or self.statement is None or prev_at is None:
            return []
        return [(self.statement, params(prev_at, now))]

    def server_queries(self) -> list[tuple[str, dict[str, Any]]]:
        return [("relation_pages", self._pages_params)] if self.statement is not None and self.scans else []

    def poll(
        self,
        rows: Callable[[str, dict[str, Any]], list[dict[str, Any]]],
        run: Callable[..., list[dict[str, Any]]],
        prev_at: datetime | None,
        now: datetime,
        queues: Iterable[Any],
    ) -> Counts | None:
        """This poll's counts (None: not counted), through the Monitor's `rows` (server queries) and
        `run` (dialect statements)."""
        due = self.due(prev_at)
        for name, p in self.server_queries():
            self.pages = int(rows(name, p)[0]["pages"])
        if not due or self.statement is None or prev_at is None:
            return None
        return counts(run(self.statement, **params(prev_at, now)), also=(q.queue for q in queues))

    def note(self) -> str | None:
        """Why the timestamps' rates are unknown at this poll, or None."""
        if (
            self.statement is not None
            and self.scans
            and self.pages is not None
            and self.pages > MAX_SCAN_PAGES
        ):
            return skipped_note(self.pages, self.scans)
        return None
