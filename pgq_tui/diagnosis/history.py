"""Time over a Snapshot history (oldest first, the latest last): how long a condition has held, from
the snapshots' own clock (`server.now`), never the wall clock."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pgq_tui.diagnosis.findings import Finding, Thresholds
from pgq_tui.monitor.snapshot import Snapshot

History = Sequence[Snapshot]
Rule = Callable[[History, Thresholds], list[Finding]]


def at(s: Snapshot) -> float:
    return s.server.now.timestamp()


def held(history: History, holds: Callable[[Snapshot], bool]) -> float | None:
    """Seconds `holds` has been true on every snapshot up to the latest (0.0: only the latest); None
    when it is false on the latest."""
    if not history or not holds(history[-1]):
        return None
    start = history[-1]
    for s in reversed(history[:-1]):
        if not holds(s):
            break
        start = s
    return at(history[-1]) - at(start)


def steady(history: History, holds: Callable[[Snapshot], bool], t: Thresholds) -> float | None:
    """Held long enough to be signal (undated evidence): its duration, else None."""
    d = held(history, holds)
    return d if d is not None and d >= t.min_duration_s else None
