"""Rates that see every writer, derived from what the jobs table shows. Pure: no database, no clock.

Most workers are not ours, so enqueued/s, completed/s and failed/s per queue must come from the table:
- enqueued: rows with ids first seen by this poll, per queue (ids above the previous poll's max(id),
  plus gaps of the previous window that committed since). Any INSERT or COPY counts. Exact unless an
  id stays unseen for a whole poll (the row was deleted before any poll saw it, or rolled back): those
  `unresolved` ids are the measured bound, the true rate lies in [value, value + bound].
- completed: enqueued - change in depth (ready + scheduled + running + stuck + dead) over the
  window, per queue. Deleting a finished job and marking it done both take it out of the depth, so
  this is right for either; exact when both depths are exact (every count under the cap) and
  `enqueued` is exact. For a queue deeper than the cap the same rule runs over two background counts
  (one snapshot each): exact, stale by the background count's age.
- failed: the net change of the dead-letter count (a retry or a discard in the same window hides as
  many); from the counters table, every failed attempt.
Where the counters table (<table>_stats, bumped by pgq_tui.queue in the same statement) exists it is
the exact source, unless the table shows clearly more activity than the counters do (a writer that
does not bump them): then the table-derived figure is used. Each rate's Figure says which.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pgq_tui.monitor import finished as finished_rates
from pgq_tui.monitor import health
from pgq_tui.monitor.background import BackgroundCount
from pgq_tui.monitor.counting import DEPTH as DEPTH_STATES
from pgq_tui.monitor.counting import background_depth, exact_depth
from pgq_tui.monitor.foreign import exceeds, foreign_writers
from pgq_tui.monitor.snapshot import (
    APPROXIMATE,
    AT_LEAST,
    EXACT,
    STALE,
    UNKNOWN,
    Figure,
    QueueStats,
    Rates,
    TableRates,
    Throughput,
    ThroughputPoint,
)
from pgq_tui.monitor.table_series import TableSeries

Row = Mapping[str, Any]
MAX_SPAN = 200_000  # ids read per poll at most (a burst above it becomes part of the bound)
GAP_ROWS = 1000  # gap ranges remembered for the next poll's late-commit look-up
COUNTERS, IDS, DEPTH, FAILED_DELTA, BG_DEPTH = "counters", "ids", "depth", "failed count", "background depth"
FOREIGN = "foreign writers"  # a rate the counters miss and the table cannot derive yet: unknown
FOREIGN_WHY = "the counters miss the foreign writers' share and the table cannot derive this rate yet"
NONE = "none"  # no rate source at this poll: the rate is unknown (its Figure says why)
TWO_POLLS = "rates need two polls"
NO_SOURCE_WHY = (
    "no per-queue rate source: the ids are not increasing integers served by an index, and the queue "
    "keeps no counters or finish times (the table-wide row rates are pg_stat's)"
)
RATE_NAMES = ("enqueued", "completed", "failed", "dead")
PG_LAG_S = 2.0  # pg_stat_user_tables lags the writes by up to a second (PostgreSQL flushes it ~1/s)


def unknown_rates(reason: str) -> Rates:
    """Every rate unknown (None) with the reason: never an exact-looking 0.0."""
    figure = Figure(UNKNOWN, None, NONE, reason=reason)
    return Rates(None, None, None, None, {name: figure for name in RATE_NAMES})


@dataclass(frozen=True)
class Activity:
    """What one poll saw of the table's movement."""

    at: datetime  # the poll's server time
    max_id: int  # watermark: ids above it are new at the next poll
    new: dict[str, int]  # rows first seen by this poll, per queue
    holes: int  # ids of this window not seen (looked up again next poll)
    unresolved: int  # ids of the previous window still unseen: deleted before seen, or rolled back
    gaps: tuple[tuple[int, int], ...]  # id ranges to look up next poll
    # exact depth and dead letters per queue (a queue not listed has none; a value None: not exact);
    # None: this poll has no counts (its queues panel failed, or they were not asked for)
    depth: dict[str, int | None] | None = None
    dead: dict[str, int | None] | None = None
    pg: tuple[int, int, int] | None = None  # pg_stat_user_tables n_tup_ins, n_tup_upd, n_tup_del
    first: bool = False  # the first poll: it only learned the watermark
    # per queue (enqueued, completed, failed) by the framework's timestamps since the previous poll
    # (monitor/finished.py); None: not counted at this poll
    finished: finished_rates.Counts | None = None
    # the server time the poll's time windows (the timestamps', the counters') ended at: its `at`, or
    # a little before when they were planned before the server answered (monitor/ahead.py)
    windows_at: datetime | None = None


@dataclass(frozen=True)
class Removal:
    """An operator's removal, as the counters table records it in the same statement (discard: dead
    letters deleted; prune: kept done rows deleted), at its exact time: rows that left the table
    without being completed, by pgq-top or by any process using pgq_tui.queue."""

    at: datetime
    queue: str
    discarded: int
    pruned: int


def removals(rows: Iterable[Row]) -> tuple[Removal, ...]:
    """The counters statement's rows that record removals (rows of older counters tables have none)."""
    return tuple(
        Removal(r["bucket"], str(r["queue"]), int(r.get("discarded") or 0), int(r.get("pruned") or 0))
        for r in rows
        if r.get("discarded") or r.get("pruned")
    )


def removed(found: Sequence[Removal], since: datetime, until: datetime, queue: str | None = None) -> int:
    """Rows removed in (since, until], of one queue or of all; `pruned` counts only table-wide (done
    rows are in no queue's depth)."""
    return sum(
        r.discarded + (r.pruned if queue is None else 0)
        for r in found
        if since < r.at <= until and (queue is None or r.queue == queue)
    )


def _discount(
    rates: Mapping[str, Rates], found: Sequence[Removal], window: Sequence[Activity]
) -> dict[str, Rates]:
    """The table-derived completions less the operator's discards over the same window: a discarded
    dead letter leaves the depth as a completion does, but it is none."""
    if not found or len(window) < 2:
        return dict(rates)
    first, last = window[0], window[-1]
    dt = (last.at - first.at).total_seconds()
    out = {}
    for q, r in rates.items():
        n = removed(found, first.at, last.at, q)
        if n and r.completed is not None and dt > 0:
            r = dataclasses.replace(r, completed=max(0.0, r.completed - n / dt))
        out[q] = r
    return out


def _removed_per_s(found: Sequence[Removal], window: Sequence[Activity]) -> float:
    """Rows/s the operator removed over the pg_stat window, reaching back PG_LAG_S before it: the
    pg_stat counters lag, so a removal's deletes may land in the interval after its own."""
    ends = [a for a in window if a.pg is not None]
    if len(ends) < 2 or not found:
        return 0.0
    dt = (ends[-1].at - ends[0].at).total_seconds()
    since = ends[0].at - timedelta(seconds=PG_LAG_S)
    return removed(found, since, ends[-1].at) / dt if dt > 0 else 0.0


def activity_params(prev: Activity | None) -> dict[str, Any]:
    """Parameters of the activity statement (dialects/sql/activity.sql) for the poll after `prev`."""
    gaps = prev.gaps if prev is not None else ()
    return {
        "after": prev.max_id if prev is not None else None,
        "max_span": MAX_SPAN,
        "gap_rows": GAP_ROWS,
        "lo": [lo for lo, _ in gaps],
        "hi": [hi for _, hi in gaps],
    }


def activity(rows: Iterable[Row], prev: Activity | None, at: datetime) -> Activity:
    """The activity statement's rows (dialects/sql/activity.sql) as an Activity (depth, dead and
    pg filled in by the caller).

    >>> from datetime import datetime, timezone
    >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> a = activity([{"kind": "top", "queue": None, "n": 10, "lo": None, "hi": None}], None, t)
    >>> a.first, a.max_id
    (True, 10)
    >>> rows = [{"kind": "new", "queue": "q", "n": 3, "lo": None, "hi": None},
    ...         {"kind": "gap", "queue": None, "n": None, "lo": 12, "hi": 12},
    ...         {"kind": "top", "queue": None, "n": 14, "lo": None, "hi": None}]
    >>> b = activity(rows, a, t); b.new, b.holes, b.gaps
    ({'q': 3}, 1, ((12, 12),))
    >>> late = [{"kind": "late", "queue": "q", "n": 1, "lo": None, "hi": None},
    ...         {"kind": "top", "queue": None, "n": 14, "lo": None, "hi": None}]
    >>> c = activity(late, b, t); c.new, c.unresolved, c.holes
    ({'q': 1}, 0, 0)
    """
    new: dict[str, int] = {}
    gaps: list[tuple[int, int]] = []
    top, fresh, late = 0, 0, 0
    for r in rows:
        kind = r["kind"]
        if kind == "top":
            top = int(r["n"])
        elif kind == "gap":
            gaps.append((int(r["lo"]), int(r["hi"])))
        elif kind in ("new", "late"):
            new[r["queue"]] = new.get(r["queue"], 0) + int(r["n"])
            fresh += int(r["n"]) if kind == "new" else 0
            late += int(r["n"]) if kind == "late" else 0
    if prev is None:
        return Activity(at, top, {}, 0, 0, (), first=True)
    span = max(0, top - prev.max_id)
    return Activity(
        at=at,
        max_id=max(prev.max_id, top),  # the newest rows may be gone: never move the watermark back
        new=new,
        holes=max(0, span - fresh),
        unresolved=max(0, prev.holes - late),
        gaps=tuple(gaps),
    )


def with_counts(
    a: Activity,
    queues: Sequence[QueueStats] | None,
    pg: tuple[int, int, int] | None,
    depth_states: frozenset[str] = DEPTH_STATES,
) -> Activity:
    """The Activity with this poll's exact depths (over `depth_states`, the unfinished states the
    queue's kind has: counting.depth_of) and dead-letter counts (None where not exact or not counted;
    `queues` None: the poll has no counts). A queue with no unfinished rows is not listed: its 0 is
    exact, also on a poll that saw no queue at all."""
    if queues is None:
        return dataclasses.replace(a, depth=None, dead=None, pg=pg)
    depth = {q.queue: exact_depth(q, depth_states) for q in queues}
    dead = {q.queue: q.dead if _counted(q, "dead") else None for q in queues}
    return dataclasses.replace(a, depth=depth, dead=dead, pg=pg)


def _counted(q: QueueStats, name: str) -> bool:
    """The count is exact at this poll and the dialect counts it (a hand-built QueueStats: all)."""
    return (not q.figures or name in q.figures) and q.accuracy(name) == EXACT


def _at(table: Mapping[str, int | None] | None, queue: str) -> int | None:
    """A queue's figure at one poll. A queue the poll did not list has no unfinished rows (exact 0);
    no table means the poll had no counts at all (its queues panel failed)."""
    return table.get(queue, 0) if table is not None else None


def table_rates(window: Sequence[Activity]) -> dict[str, Rates]:
    """Per-queue rates derived from the table over the window (first to last poll)."""
    polls = [a for a in window[1:] if not a.first]  # each poll's `new` covers the time since the one before
    if not polls:
        return {}
    first, last = window[0], window[-1]
    dt = (last.at - first.at).total_seconds()
    if dt <= 0:
        return {}
    # ids unseen for a whole poll, plus those the last poll has not seen yet (a late commit, or a row
    # already deleted): the bound covers the whole window, not all but its last poll
    unresolved = sum(a.unresolved for a in polls) + last_holes(window)
    queues = {q for a in window for q in (*a.new, *(a.depth or ()))}
    enqueued: collections.Counter[str] = collections.Counter()
    for a in polls:  # one pass over the polls, not one per queue (50 queues x the window's polls)
        enqueued.update(a.new)
    accuracy, bound = (EXACT, None) if unresolved == 0 else (APPROXIMATE, unresolved / dt)
    out = {}
    for q in sorted(queues):
        enq = enqueued[q]
        figures = {"enqueued": Figure(accuracy, last.at, IDS, bound)}
        completed = None
        d0, d1 = _at(first.depth, q), _at(last.depth, q)
        if d0 is not None and d1 is not None:
            completed = health.rate(enq - (d1 - d0), dt)
            figures["completed"] = Figure(accuracy, last.at, DEPTH, bound)
        failed = None
        f0, f1 = _at(first.dead, q), _at(last.dead, q)
        if f0 is not None and f1 is not None:
            failed = health.rate(max(0, f1 - f0), dt)
            figures["failed"] = Figure(EXACT if f1 >= f0 else AT_LEAST, last.at, FAILED_DELTA)
        out[q] = Rates(health.rate(enq, dt), completed, failed, failed, figures)
    return out


def last_holes(window: Sequence[Activity]) -> int:
    return window[-1].holes if window and not window[-1].first else 0


def background_completed(
    bg: BackgroundCount | None, queue: str, found: Sequence[Removal] = ()
) -> tuple[float, Figure] | None:
    """completed/s over the last two background counts, for a queue too deep to count every poll
    (less the operator's discards between them)."""
    prev = bg.previous if bg is not None else None
    if bg is None or prev is None or bg.new is None:
        return None
    d0, d1 = background_depth(prev, queue), background_depth(bg, queue)
    dt = (bg.as_of - prev.as_of).total_seconds()
    if d0 is None or d1 is None or dt <= 0:
        return None
    seen = sum(bg.new.values())
    span = max(0, bg.max_id - prev.max_id)
    accuracy, bound = (STALE, None) if seen >= span else (APPROXIMATE, (span - seen) / dt)
    gone = removed(found, prev.as_of, bg.as_of, queue)
    value = health.rate(max(0, bg.new.get(queue, 0) - (d1 - d0) - gone), dt)
    return value, Figure(accuracy, bg.as_of, BG_DEPTH, bound)


def counted_between(
    history: Sequence[ThroughputPoint],
    queue_history: Mapping[str, Sequence[int]],
    bg: BackgroundCount | None,
) -> dict[str, float | None] | None:
    """Per queue, the counters' own completed/s over the seconds between the last two background
    counts: what a deep queue's completions derived from those counts (background_completed) are
    judged against. The counters' rate proper averages the last 10 s, another window, so a burst
    between two counts read as more than the counters saw, and as foreign writers. The seconds
    counted are generous (one before the earlier count, and up to the end of the later one's scans:
    only ever more, never a false alarm). None for a queue (all of them: the window is the same) when
    the history does not cover those seconds yet: the later count's last second is still filling, or
    the earlier count is older than the history. None without two counts.

    >>> from datetime import datetime, timedelta, timezone
    >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> h = [ThroughputPoint(t + timedelta(seconds=i), 0, 0, 0, 0) for i in range(10)]
    >>> prev = BackgroundCount(t + timedelta(seconds=3.5), 10.0, frozenset(), {}, 0)
    >>> bg = dataclasses.replace(prev, as_of=t + timedelta(seconds=5.5), previous=prev)
    >>> counted_between(h, {"a": [100] * 10}, bg)  # seconds 2..5, over 2 s
    {'a': 200.0}
    >>> late = dataclasses.replace(bg, as_of=t + timedelta(seconds=10.2))
    >>> counted_between(h, {"a": [100] * 10}, late)
    {'a': None}
    """
    prev = bg.previous if bg is not None else None
    if bg is None or prev is None:
        return None
    dt = (bg.as_of - prev.as_of).total_seconds()
    first = prev.as_of.replace(microsecond=0) - timedelta(seconds=1)
    last = (bg.as_of + timedelta(milliseconds=bg.cost_ms)).replace(microsecond=0)
    covered = bool(history) and history[0].at <= first and last <= history[-1].at and dt > 0
    out: dict[str, float | None] = {}
    for q, counts in queue_history.items():
        inside = [n for p, n in zip(history, counts, strict=False) if first <= p.at <= last]
        out[q] = sum(inside) / dt if covered else None
    return out


def merge(
    counters: Mapping[str, Rates] | None,
    table: Mapping[str, Rates],
    bg: BackgroundCount | None,
    pg: TableRates | None = None,
    found: Sequence[Removal] = (),
    removed_per_s: float = 0.0,
    counted: Rates | None = None,
    scale: float = 1.0,
    between: Mapping[str, float | None] | None = None,
) -> dict[str, Rates]:
    """One Rates per queue: the counters table where it exists and accounts for what the table shows,
    else the table's own figure (with the background counts for deep queues' completions). With
    foreign writers present (monitor/foreign.py) a rate the table cannot derive yet is a lower bound
    from the counters when they saw some, else unknown (None): never the counters' 0. `between`:
    the counters' completed/s over the background counts' window (counted_between), which a deep
    queue's completions from those counts are judged against; while it is not covered (None) the
    counters stand, and the judgement waits for the next poll."""
    out: dict[str, Rates] = {}
    foreign = foreign_writers(counters, table, pg, removed_per_s, counted, scale) is not None
    for q in sorted(set(counters or {}) | set(table)):
        t = table.get(q)
        c = (counters or {}).get(q, Rates(0.0, 0.0, 0.0, 0.0)) if counters is not None else None
        values: dict[str, float | None] = {}
        figures: dict[str, Figure] = {}
        for name in ("enqueued", "completed", "failed"):
            tv = getattr(t, name) if t is not None else None
            tf = t.figures.get(name) if t is not None else None
            cv = getattr(c, name) if c is not None else None
            judged = cv * scale if cv is not None else None
            if name == "completed" and tv is None:
                deep = background_completed(bg, q, found)
                if deep is not None:
                    tv, tf = deep
                    if between is not None and judged is not None:
                        own = between.get(q, 0.0)
                        judged = float("inf") if own is None else max(judged, own)
            if cv is not None and foreign and name != "failed" and (tv is None or cv <= 0):
                # the counters miss the foreign writers' share. Where they saw none of this queue's
                # rate they attest nothing: the table's figure stands, with its bound (a queue whose
                # rows are deleted before any poll sees them shows 0 + the unseen ids, never an
                # exact 0). Where the table cannot derive the rate yet: the counters' number as a
                # lower bound, or unknown with the reason when they saw none.
                if tv is not None:
                    values[name] = tv
                    if tf is not None:
                        figures[name] = tf
                elif cv > 0:
                    values[name], figures[name] = cv, Figure(AT_LEAST, None, COUNTERS)
                else:
                    values[name] = None
                    figures[name] = Figure(UNKNOWN, None, FOREIGN, reason=FOREIGN_WHY)
            elif cv is not None and not exceeds(tv, judged):
                values[name], figures[name] = cv, Figure(EXACT, None, COUNTERS)
            else:
                values[name] = tv
                if tf is not None:
                    figures[name] = tf
        from_counters = (
            c is not None and figures["failed"].source == COUNTERS if "failed" in figures else False
        )
        dead = c.dead if from_counters and c is not None else values["failed"]
        out[q] = Rates(values["enqueued"], values["completed"], values["failed"], dead, figures)
    return out


def totals(per_queue: Mapping[str, Rates], fallback: Rates) -> Rates:
    """All queues together; a rate unknown for some queue makes the total a lower bound (the sum of
    the others), unknown for every queue makes it unknown (None, with the first reason)."""
    if not per_queue:
        return fallback
    values: dict[str, float | None] = {}
    figures: dict[str, Figure] = {}
    for name in RATE_NAMES:
        parts = [getattr(r, name) for r in per_queue.values()]
        values[name] = sum(p for p in parts if p is not None)
        figs = [r.figures.get(name) for r in per_queue.values()]
        sources = sorted({f.source for f in figs if f is not None} or {COUNTERS})
        if all(p is None for p in parts):
            values[name] = None
            why = next((f.reason for f in figs if f is not None and f.reason), "not known for any queue")
            figures[name] = Figure(UNKNOWN, None, "+".join(sources), reason=why)
        elif any(p is None for p in parts):
            figures[name] = Figure(AT_LEAST, None, "+".join(sources))
        else:
            worst = max(
                (f for f in figs if f is not None),
                key=lambda f: (AT_LEAST, APPROXIMATE, STALE, EXACT)[::-1].index(f.accuracy),
                default=Figure(EXACT, None, COUNTERS),
            )
            bound = sum(f.bound or 0.0 for f in figs if f is not None) or None
            figures[name] = Figure(worst.accuracy, worst.as_of, "+".join(sources), bound)
    return Rates(values["enqueued"], values["completed"], values["failed"], values["dead"], figures)


def source_of(per_queue: Mapping[str, Rates]) -> str:
    """ "counters", "table" or "mixed": where this poll's per-queue rates came from."""
    kinds = {  # a rate not known this poll (no figure) comes from neither
        "counters" if f.source == COUNTERS else "table"
        for r in per_queue.values()
        for f in (r.figures.get(n) for n in ("enqueued", "completed", "failed"))
        if f is not None
    }
    return kinds.pop() if len(kinds) == 1 else ("mixed" if kinds else "counters")


def pg_rates(window: Sequence[Activity]) -> TableRates | None:
    """Table-wide inserted/updated/deleted per second from pg_stat_user_tables over the window."""
    ends = [a for a in window if a.pg is not None]
    if len(ends) < 2:
        return None
    first, last = ends[0], ends[-1]
    dt = (last.at - first.at).total_seconds()
    if dt <= 0 or first.pg is None or last.pg is None:
        return None
    ins, upd, dele = (health.rate(max(0, b - a), dt) for a, b in zip(first.pg, last.pg, strict=True))
    return TableRates(dt, ins, upd, dele)


def comparable(counters_window_s: float | None, table_window_s: float | None) -> float:
    """What a counters' rate (its events over `counters_window_s`, 10 s) is multiplied by before a
    table-derived rate over a shorter window (the first polls) is judged against it: the counters'
    events all inside the shorter window, their highest possible rate there. So a burst by pgq's
    own workers never reads as foreign writers because the windows differ; 1 once they match.

    >>> comparable(10.0, 2.5), comparable(10.0, 12.0), comparable(None, 2.0), comparable(10.0, None)
    (4.0, 1.0, 1.0, 1.0)
    """
    if not counters_window_s or not table_window_s or table_window_s <= 0:
        return 1.0
    return max(1.0, counters_window_s / table_window_s)


def counted_over(history: Sequence[ThroughputPoint], pg: TableRates | None, now: datetime) -> Rates | None:
    """The counters' own enqueued/s and completed/s over the seconds pg_stat's deltas cover (`pg`'s
    window, ending at this poll), for the table-wide foreign-writer check: the counters' rates proper
    average a fixed window (10 s) that a short pg_stat window (the first polls, a burst) does not
    match, which made a burst by pgq's own workers look foreign. Buckets overlapping the window and
    the second before it count (pg_stat lags by up to ~1 s): only ever more, never a false alarm.

    >>> from datetime import datetime, timedelta, timezone
    >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> h = [ThroughputPoint(t + timedelta(seconds=i), 0, 100 * i, 0, 0) for i in range(10)]
    >>> counted_over(h, TableRates(2.0, 0, 0, 800), t + timedelta(seconds=10)).completed  # 7, 8, 9
    1200.0
    """
    if pg is None or pg.interval_s <= 0:
        return None
    since = now - timedelta(seconds=pg.interval_s + 2.0)
    inside = [p for p in history if since < p.at <= now]
    return Rates(
        sum(p.enqueued or 0 for p in inside) / pg.interval_s,  # a counters table's: never None
        sum(p.completed or 0 for p in inside) / pg.interval_s,
        None,
    )


def table_history(
    polls: Sequence[Activity],
    until: datetime,
    history_s: int,
    stamped: frozenset[str] = frozenset(),
    series: TableSeries | None = None,
) -> tuple[tuple[ThroughputPoint, ...], dict[str, tuple[int, ...]]]:
    """Per-second history when there are no counters: each poll interval's derived counts spread
    evenly over the whole seconds it covers (a chart, not a figure: the rates above are the
    figures), the `history_s` seconds before `until` shown. `series` keeps the seconds of the
    intervals it has taken (the Monitor's, across polls): only the new intervals are derived.

    >>> from datetime import datetime, timedelta, timezone
    >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> a = Activity(t, 10, {}, 0, 0, (), depth={"q": 5})
    >>> b = Activity(t + timedelta(seconds=2), 14, {"q": 4}, 0, 0, (), depth={"q": 6})
    >>> h, per = table_history([a, b], t + timedelta(seconds=3), 4)
    >>> [p.enqueued for p in h], per  # the seconds no interval rated are unknown, not 0
    ([None, 2, 2, None], {'q': (0, 2, 2, 0)})
    """
    if series is None:
        series = TableSeries(stamped)
    elif series.stamped != stamped or (polls and series.behind(polls[-1].at)):
        series.restart(stamped)
    # the polls are in time order: only those after the newest interval taken are new (one or two a
    # poll, not the window's 300)
    start = len(polls) - 1
    while start > 0 and not series.has(polls[start].at):
        start -= 1
    for a, b in itertools.pairwise(itertools.islice(polls, start, None)):
        if not series.has(b.at):
            pair = [a, b]
            rates = (
                {}
                if b.first
                else finished_rates.overlay(table_rates(pair), finished_rates.rates(pair, stamped))
            )
            series.add(a.at, b.at, rates)
    return series.window(until, history_s)


def throughput(
    counters: Throughput | None,
    window: Sequence[Activity],
    polls: Sequence[Activity],
    bg: BackgroundCount | None,
    rate_window_s: int,
    history_s: int,
    now: datetime,
    stamped: frozenset[str] = frozenset(),
    rates_note: str | None = None,
    no_source: str | None = None,
    found: Sequence[Removal] = (),
    series: TableSeries | None = None,
) -> Throughput:
    """The Throughput of this poll: counters where they exist and suffice, the table's figures else,
    and the framework's timestamps over both for the rates in `stamped` (monitor/finished.py).
    `no_source`: why the queue's kind has no per-queue rate source at all (its rates are unknown
    with that reason, never 0.0). `found`: the operator's removals the counters recorded, never
    completions nor a foreign writer's deletes. `series`: the per-second history kept across polls
    (table_history)."""
    pg = pg_rates(window)
    own = counters.per_queue if counters is not None else None
    derived = _discount(table_rates(window), found, window)
    gone = _removed_per_s(found, window)
    counted = counted_over(counters.history, pg, now) if counters is not None else None
    window_s = (window[-1].at - window[0].at).total_seconds() if len(window) > 1 else None
    stamps_s = finished_rates.window_s(window) if stamped else None
    scale = comparable(counters.interval_s if counters is not None else None, window_s)
    between = counted_between(counters.history, counters.queue_history, bg) if counters is not None else None
    per_queue = finished_rates.overlay(
        merge(own, derived, bg, pg, found, gone, counted, scale, between),
        finished_rates.rates(window, stamped),
    )
    source = source_of(per_queue)
    if counters is not None and source == "counters":
        history, queue_history = counters.history, counters.queue_history
    else:
        history, queue_history = table_history(polls, now.replace(microsecond=0), history_s, stamped, series)
    if counters is None and not per_queue:
        source = "table"
    return Throughput(
        interval_s=float(rate_window_s) if source == "counters" or window_s is None else window_s,
        window_s=window_s,
        timestamps_window_s=stamps_s,
        total=totals(per_queue, _no_queue(counters, window, no_source or rates_note)),
        per_queue=per_queue,
        history=history,
        queue_history=queue_history,
        source=source,
        table=pg,
        foreign=foreign_writers(own, derived, pg, gone, counted, scale),
        rates_note=rates_note or no_source,
    )


def _no_queue(counters: Throughput | None, window: Sequence[Activity], why: str | None) -> Rates:
    """The totals when no queue has a rate: the counters' own (exact), a measured 0 (two polls that
    followed the ids saw no job move), else unknown with the reason."""
    if counters is not None:
        return counters.total
    if why is not None:
        return unknown_rates(why)
    if not [a for a in window[1:] if not a.first]:
        return unknown_rates(TWO_POLLS)
    return Rates(0.0, 0.0, 0.0, 0.0)
