"""The framework's own per-queue counts (QueueModel.cached, e.g. pg-boss 12.38's monitor's) as a
figure's source. Pure: rows in, Cached out; and the rule for a figure the poll cannot take exactly.

Such a figure (above the cap, or a scan left to the background) has up to two stale values: the
background counter's and the framework's. The newer `as_of` wins, and neither may contradict the poll:
above the cap, a value the poll has already read past (at most cap1 - 1) is not shown. The figure is
never fresher than the count it shows: its `as_of` is when the framework counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pgq_tui.dialects.contract import CACHED_KEYS

SOURCE = "cached"  # Figure.source of a figure the framework counted itself


@dataclass(frozen=True)
class Cached:
    """The framework's counts of one poll: (queue, name) -> rows, as of each queue's `as_of`."""

    counts: Mapping[tuple[str, str], int]
    as_of: Mapping[str, datetime]  # queue -> when its counts were true
    kept_by: str  # who keeps them, in words (the figure's reason)

    def value(self, queue: str, name: str) -> tuple[int, datetime] | None:
        """The framework's count of `name` in `queue` and when it was true; None when it keeps none."""
        count = self.counts.get((queue, name))
        return None if count is None else (count, self.as_of[queue])


def from_rows(rows: Iterable[Mapping[str, Any]], kept_by: str) -> Cached:
    """One Cached from the statement's rows (CACHED_KEYS, then count names; a NULL is not kept).

    >>> from datetime import datetime, timezone
    >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> c = from_rows([{"queue": "q", "as_of": t, "ready": 40, "dead": None}], "its monitor")
    >>> c.value("q", "ready") == (40, t), c.value("q", "dead"), c.value("other", "ready")
    (True, None, None)
    """
    counts: dict[tuple[str, str], int] = {}
    as_of: dict[str, datetime] = {}
    for row in rows:
        queue = str(row["queue"])
        as_of[queue] = row["as_of"]
        for name, value in row.items():
            if name not in CACHED_KEYS and value is not None:
                counts[(queue, name)] = int(value)
    return Cached(counts, as_of, kept_by)


def newer(
    cached: Cached | None,
    queue: str,
    name: str,
    background: datetime | None,
    floor: int | None = None,
) -> tuple[int, datetime] | None:
    """The framework's count when it is the one to show: kept, newer than the background's count
    (`background`: its as_of, None when none has landed or it contradicts the poll) and above
    `floor`, the poll's proven lower bound less one (None: the poll read nothing of it). Else None.

    >>> from datetime import datetime, timedelta, timezone
    >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> c = Cached({("q", "ready"): 40}, {"q": t}, "its monitor")
    >>> newer(c, "q", "ready", None, floor=20) == (40, t)  # no background count: the framework's
    True
    >>> newer(c, "q", "ready", t + timedelta(seconds=1), floor=20)  # the background's is newer
    >>> newer(c, "q", "ready", t - timedelta(seconds=1), floor=50)  # contradicts the poll (>= 51)
    """
    own = cached.value(queue, name) if cached is not None else None
    if own is None or (floor is not None and own[0] <= floor):
        return None
    if background is not None and own[1] <= background:
        return None
    return own
