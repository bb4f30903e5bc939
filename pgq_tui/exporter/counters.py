"""Monotonic counters from the Snapshot's per-second throughput buckets.

The queue's counters table keeps one row per second (and drops them after an hour), so the
Snapshot carries the last few minutes as per-second history. Each collect adds the complete buckets
newer than the last one already counted; the first collect only sets that mark, so a restarted
exporter starts at 0 rather than with a burst of history that Prometheus would read as new work.
A gap shorter than the history (5 min) is filled in once the database answers again.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime

from pgq_tui.monitor.snapshot import Throughput

EVENTS = ("enqueued", "completed", "failed", "dead")


@dataclass
class ThroughputCounters:
    totals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(EVENTS, 0))
    completed_by_queue: dict[str, int] = field(default_factory=dict)
    mark: datetime | None = None  # the newest bucket already counted
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, tp: Throughput) -> None:
        if not tp.history:
            return
        with self._lock:
            if self.mark is None:
                self.mark = tp.history[-1].at
                for q in tp.queue_history:
                    self.completed_by_queue.setdefault(q, 0)
                return
            new = [i for i, p in enumerate(tp.history) if p.at > self.mark]
            for i in new:
                point = tp.history[i]
                for event in EVENTS:
                    self.totals[event] += int(getattr(point, event))
            for q, series in tp.queue_history.items():
                self.completed_by_queue[q] = self.completed_by_queue.get(q, 0) + sum(
                    series[i] for i in new if i < len(series)
                )
            if new:
                self.mark = tp.history[new[-1]].at
