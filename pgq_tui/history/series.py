"""The last hour in memory: one small sample per poll, for the charts' 1 min / 10 min / 1 h windows.

Pure: Snapshots in, samples out. The dashboard feeds every Snapshot it renders; replay feeds the
recorded polls before its cursor. A sample keeps what an engineer looks back at: depth by state,
rates, the oldest ready job's age per queue, the table's dead tuples and the claim cost.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pgq_tui.monitor.snapshot import Snapshot

WINDOWS: tuple[tuple[str, float], ...] = (("1 min", 60.0), ("10 min", 600.0), ("1 h", 3600.0))
KEEP_S = 3600.0
STATES = ("ready", "scheduled", "running", "stuck", "dead", "done")


@dataclass(frozen=True)
class QueuePoint:
    depth: dict[str, int | None]  # state -> jobs (None: not known at that poll)
    oldest_ready_s: float | None
    enqueued: float | None  # per second
    completed: float | None


@dataclass(frozen=True)
class Sample:
    at: datetime  # the server's clock
    enqueued: float | None  # all queues, per second
    completed: float | None
    failed: float | None
    dead_tuples: int | None = None
    claim_buffers: int | None = None
    queues: dict[str, QueuePoint] = field(default_factory=dict)


def _known(value: object) -> int | None:
    return value if isinstance(value, int) else None


def sample(snap: Snapshot) -> Sample:
    """What one poll adds to the history."""
    total = snap.throughput.total
    probe = snap.bloat.probe.latest if snap.bloat is not None else None
    queues = {}
    for q in snap.queues:
        rates = snap.throughput.per_queue.get(q.queue)
        queues[q.queue] = QueuePoint(
            depth={s: _known(getattr(q, s, None)) for s in STATES},
            oldest_ready_s=q.oldest_ready_age_s,
            enqueued=rates.enqueued if rates else None,
            completed=rates.completed if rates else None,
        )
    return Sample(
        at=snap.server.now,
        enqueued=total.enqueued,
        completed=total.completed,
        failed=total.failed,
        dead_tuples=None if "table" in snap.errors else snap.table.dead_tuples,
        claim_buffers=probe.buffers if probe is not None else None,
        queues=queues,
    )


def seed(snap: Snapshot) -> list[Sample]:
    """The seconds before the first poll, from the Snapshot's own per-second throughput history, so
    a fresh dashboard's chart is not empty for its first minute (where the history knows them: a
    second it could not rate has no point, never a 0)."""
    return [
        Sample(at=p.at, enqueued=_rate(p.enqueued), completed=_rate(p.completed), failed=_rate(p.failed))
        for p in snap.throughput.history
        if p.at < snap.server.now
    ]


def _rate(jobs: int | None) -> float | None:
    """A one-second bucket's jobs as a rate; unknown stays unknown (no point on the chart)."""
    return None if jobs is None else float(jobs)


class History:
    """Samples of the last `keep_s` seconds, oldest first (by the server's clock)."""

    def __init__(self, keep_s: float = KEEP_S) -> None:
        self.keep_s = keep_s
        self.samples: deque[Sample] = deque()

    def add(self, snap: Snapshot) -> None:
        if not self.samples:
            self.samples.extend(seed(snap))
        elif self.samples[-1].at >= snap.server.now:  # the same poll again, or the clock went back
            return
        self.samples.append(sample(snap))
        cutoff = snap.server.now - timedelta(seconds=self.keep_s)
        while self.samples and self.samples[0].at < cutoff:
            self.samples.popleft()

    def extend(self, snaps: Iterable[Snapshot]) -> None:
        for snap in snaps:
            self.add(snap)

    def window(self, seconds: float, until: datetime | None = None) -> list[Sample]:
        """The samples in (until - seconds, until], until defaulting to the newest."""
        if not self.samples:
            return []
        end = until or self.samples[-1].at
        start = end - timedelta(seconds=seconds)
        return [s for s in self.samples if start < s.at <= end]


def next_window(current: int) -> int:
    """The index of the window after `current`, cycling.

    >>> [WINDOWS[next_window(i)][0] for i in range(3)]
    ['10 min', '1 h', '1 min']
    """
    return (current + 1) % len(WINDOWS)


def series(samples: Sequence[Sample], until: datetime) -> dict[str, tuple[list[float], list[float]]]:
    """Each rate's points for a chart: x in seconds before `until` (negative), y per second. A poll
    whose rate was not known leaves no point (never a zero the chart would draw as "idle").

    >>> from datetime import timezone
    >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> out = series([Sample(t - timedelta(seconds=10), 1.0, 2.0, None), Sample(t, 3.0, 4.0, 0.5)], t)
    >>> out["enqueued"], out["failed"]
    (([-10.0, 0.0], [1.0, 3.0]), ([0.0], [0.5]))
    """
    out: dict[str, tuple[list[float], list[float]]] = {}
    for name in ("enqueued", "completed", "failed"):
        known = [(s.at, v) for s in samples if (v := getattr(s, name)) is not None]
        out[name] = ([(at - until).total_seconds() for at, _ in known], [float(v) for _, v in known])
    return out
