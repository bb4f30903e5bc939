"""The per-second history derived from the table (no counters table), kept across polls.

Each poll interval's derived counts are spread evenly over the whole seconds it covers, once, when the
interval is new; the window then only reads the seconds it shows. Re-deriving every interval of the
window at every poll cost O(polls x queues): 300 intervals x 50 queues, tens of milliseconds a poll
once the window had filled. An interval covers the seconds s with a <= s < b (epoch seconds, exactly:
timedelta arithmetic, no float), so consecutive intervals share no second and each second's figures
are final when its interval is added.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from pgq_tui.monitor.snapshot import Rates, ThroughputPoint

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
SECOND = timedelta(seconds=1)


NAMES = ("enqueued", "completed", "failed", "dead")  # ThroughputPoint's, in its order
Second = tuple[int | None, int | None, int | None, int | None]
UNRATED: Second = (None, None, None, None)


def share(rates: Mapping[str, Rates], name: str, per: float) -> int | None:
    """One second's jobs of the rate `name` over all queues, an interval's rates spread at `per`
    seconds a second: None when no queue had that rate (unknown, never 0), else the sum of those
    that had it (as rates.totals() sums them); a negative derived count of finished jobs is 0.

    >>> share({"a": Rates(2.0, None, 1.0), "b": Rates(3.0, None, None)}, "enqueued", 2.0)
    10
    >>> share({"a": Rates(2.0, None, 1.0)}, "completed", 2.0) is None
    True
    """
    parts: list[float] = [v for r in rates.values() if (v := getattr(r, name)) is not None]
    if not parts:
        return None
    jobs = sum(v * per for v in parts)
    return round(jobs if name == "enqueued" else max(0.0, jobs))


def ceil_s(at: datetime) -> int:
    """The first whole epoch second not before `at` (exact: in microseconds).

    >>> ceil_s(EPOCH + timedelta(seconds=2)), ceil_s(EPOCH + timedelta(seconds=2, microseconds=1))
    (2, 3)
    """
    return -(-(at - EPOCH) // SECOND)


class QueueSeconds:
    """One queue's completed count per second, in a list from the epoch second `first` (a second no
    interval rated for the queue: 0), and the runs of seconds its intervals rated: the window takes a
    slice (a poll's per-queue history is 50 queues x 300 seconds: one lookup each cost 0.5 ms)."""

    __slots__ = ("first", "runs", "values")

    def __init__(self, first: int) -> None:
        self.first = first
        self.values: list[int] = []
        self.runs: deque[tuple[int, int]] = deque()  # [s0, s1) rated, oldest first

    def put(self, s0: int, s1: int, value: int) -> None:
        """Seconds s0..s1-1 (after every second put before: the intervals come in order; the part of
        one before `first` is forgotten already)."""
        s0 = max(s0, self.first)
        if s0 >= s1:
            return
        end = s1 - self.first
        if len(self.values) < end:
            self.values.extend([0] * (end - len(self.values)))
        self.values[s0 - self.first : end] = [value] * (s1 - s0)
        self.runs.append((s0, s1))

    def forget(self, lo: int) -> None:
        """Drop the seconds before `lo`."""
        if lo > self.first:
            del self.values[: lo - self.first]
            self.first = lo
        runs = self.runs
        while runs and runs[0][1] <= lo:
            runs.popleft()
        if runs and runs[0][0] < lo:
            runs[0] = (lo, runs[0][1])

    def rated_before(self, hi: int) -> bool:
        """Some second before `hi` (and not forgotten) was rated."""
        return bool(self.runs) and self.runs[0][0] < hi

    def window(self, lo: int, hi: int) -> tuple[int, ...]:
        """Seconds lo..hi-1 (lo not before `first`: the seconds before the window are forgotten)."""
        got = self.values[max(0, lo - self.first) : max(0, hi - self.first)]
        front = min(hi - lo, max(0, self.first - lo))
        return (0,) * front + tuple(got) + (0,) * (hi - lo - front - len(got))


class TableSeries:
    """Per epoch second: enqueued, completed, failed and dead over all queues (share()), and completed
    per queue (rounded, a negative derived count shown as 0); a second no interval rated is unknown
    (None), never 0. `stamped`: the finish-time columns the intervals' rates used; other columns
    start the series afresh (its seconds were derived another way)."""

    def __init__(self, stamped: frozenset[str] = frozenset()) -> None:
        self.restart(stamped)

    def restart(self, stamped: frozenset[str]) -> None:
        """Forget every second: the intervals will be derived again, with `stamped`."""
        self.stamped = stamped
        self.last: datetime | None = None  # the end of the newest interval taken
        self._totals: dict[int, Second] = {}  # second -> its NAMES over all queues
        self._queues: dict[str, QueueSeconds] = {}  # queue -> its completed per second
        self._points: dict[int, ThroughputPoint] = {}  # the window's points, made once per second

    def behind(self, newest: datetime) -> bool:
        """The newest poll is before the newest interval taken: the server's clock went back (a
        failover to a standby behind it), so the series must start again."""
        return self.last is not None and newest < self.last

    def has(self, end: datetime) -> bool:
        """An interval ending at `end` is taken already (or ends before the newest one taken)."""
        return self.last is not None and end <= self.last

    def add(self, start: datetime, end: datetime, rates: Mapping[str, Rates]) -> None:
        """One interval [start, end) with its per-queue rates (empty: a first poll, no rates)."""
        self.last = end
        s0, s1 = ceil_s(start), ceil_s(end)
        if s0 >= s1 or not rates:
            return
        per = (end - start).total_seconds() / (s1 - s0)
        enqueued, completed, failed, dead = (share(rates, name, per) for name in NAMES)
        total: Second = (enqueued, completed, failed, dead)
        for q, r in rates.items():
            value = round(max(0.0, (r.completed or 0.0) * per))
            self._queues.setdefault(q, QueueSeconds(s0)).put(s0, s1, value)
        self._totals.update(dict.fromkeys(range(s0, s1), total))
        for s in range(s0, s1):
            self._points.pop(s, None)  # a point made before its interval came (unknown then)

    def window(
        self, until: datetime, history_s: int
    ) -> tuple[tuple[ThroughputPoint, ...], dict[str, tuple[int, ...]]]:
        """The `history_s` seconds before `until` (a whole second): the points, and per queue the
        completed series (a queue is listed while an interval of the window rated it). Seconds
        before the window are forgotten."""
        hi = ceil_s(until)
        lo = hi - history_s
        self._forget(lo)
        seconds = range(lo, hi)
        points = self._points
        for s in seconds:
            if s not in points:
                at = (EPOCH + timedelta(seconds=s)).astimezone(until.tzinfo)  # in the server's zone
                points[s] = ThroughputPoint(at, *self._totals.get(s, UNRATED))
        history = tuple(map(points.__getitem__, seconds))
        # a queue is listed while an interval of the window rated it
        per_queue = {
            q: series.window(lo, hi) for q, series in sorted(self._queues.items()) if series.rated_before(hi)
        }
        return history, per_queue

    def _forget(self, lo: int) -> None:
        """Drop the seconds before `lo`. Each table's seconds were inserted in increasing order (the
        intervals come in order, and a window's points too), so the old ones are at its front."""
        tables: list[dict[int, Any]] = [self._totals, self._points]
        for table in tables:
            while table and (first := next(iter(table))) < lo:
                del table[first]
        for series in self._queues.values():
            series.forget(lo)
        self._queues = {q: series for q, series in self._queues.items() if series.runs}
