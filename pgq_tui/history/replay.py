"""A cursor over one queue's recorded polls: what `pgq-top replay` shows and `snapshot --from` reads.

`collect()` gives the Snapshot at the cursor, so the dashboard renders a recording exactly as it
renders a live monitor; the keys move the cursor. The chart's history is the polls before the cursor,
decoded once each and kept as small samples.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Sequence
from datetime import datetime, timezone

from pgq_tui.history.series import KEEP_S, History, Sample, sample
from pgq_tui.history.store import PollRef, Recording, RecordingError, epoch
from pgq_tui.history.when import parse_time
from pgq_tui.monitor.snapshot import Snapshot, ThroughputPoint


def choose_queue(recording: Recording, queue: str | None) -> str:
    """The recorded queue to read: the one named (exactly, or the only one containing the text), the
    only one, or an error that lists them."""
    names = recording.queues()
    if not names:
        raise RecordingError(f"{recording.path}: the recording holds no poll yet")
    if queue is None:
        if len(names) == 1:
            return names[0]
        raise RecordingError(
            f"{recording.path} holds {len(names)} queues; pick one with --queue: " + "; ".join(names)
        )
    if queue in names:
        return queue
    matches = [n for n in names if queue in n]
    if len(matches) == 1:
        return matches[0]
    raise RecordingError(f"no recorded queue matches {queue!r}; the recording holds: " + "; ".join(names))


def snapshot_at(recording: Recording, queue: str, text: str) -> Snapshot:
    """The last recorded Snapshot at or before TIME (`snapshot --from FILE --at TIME`)."""
    polls = recording.polls(queue)
    if not polls:
        raise RecordingError(f"{recording.path}: no poll of {queue}")
    zone = recording.snapshot(polls[-1]).server.now.tzinfo or timezone.utc
    last = datetime.fromtimestamp(polls[-1].at, zone)
    at = parse_time(text, zone, last)
    ref = recording.at_or_before(queue, epoch(at))
    if ref is None:
        first = datetime.fromtimestamp(polls[0].at, zone)
        raise RecordingError(f"{at.isoformat()} is before the recording starts ({first.isoformat()})")
    return recording.snapshot(ref)


class ReplaySource:
    """The SnapshotSource of a replay: the recorded poll at the cursor."""

    def __init__(self, recording: Recording, queue: str, at: str | None = None) -> None:
        self.recording = recording
        self.queue = queue
        self.polls: list[PollRef] = recording.polls(queue)
        if not self.polls:
            raise RecordingError(f"{recording.path}: no poll of {queue}")
        self.index = len(self.polls) - 1
        self._samples: dict[int, Sample] = {}
        if at is not None:
            self.index = self._index_of(at)

    @property
    def zone(self) -> timezone:
        tz = self.recording.snapshot(self.polls[-1]).server.now.tzinfo
        return tz if isinstance(tz, timezone) else timezone.utc

    def _index_of(self, text: str) -> int:
        at = parse_time(text, self.zone, self.time)
        i = bisect.bisect_right([p.at for p in self.polls], epoch(at)) - 1
        if i < 0:
            first = datetime.fromtimestamp(self.polls[0].at, self.zone)
            raise RecordingError(f"{at.isoformat()} is before the recording starts ({first.isoformat()})")
        return i

    @property
    def time(self) -> datetime:
        return datetime.fromtimestamp(self.polls[self.index].at, self.zone)

    def position(self) -> str:
        """For the header, e.g. "poll 12/400"."""
        return f"poll {self.index + 1}/{len(self.polls)}"

    def collect(self) -> Snapshot:
        """The poll at the cursor, its trend columns rebuilt from the recorded polls before it (the
        recording drops the per-second history each Snapshot carries: it repeats those polls)."""
        snap = self.recording.snapshot(self.polls[self.index])
        return with_trends(snap, self.history(TREND_S).samples)

    def step(self, polls: int) -> bool:
        """Move by whole polls; False when already at that end."""
        new = min(max(0, self.index + polls), len(self.polls) - 1)
        moved, self.index = new != self.index, new
        return moved

    def jump(self, seconds: float) -> bool:
        """Move to the last poll at or before cursor + seconds (the first after it when going back
        lands before the recording starts)."""
        target = self.polls[self.index].at + seconds
        i = bisect.bisect_right([p.at for p in self.polls], target) - 1
        if seconds > 0:
            i = max(i, self.index + 1)
        return self.step(max(0, i) - self.index)

    def go(self, text: str) -> None:
        """Move to TIME (RecordingError when it does not parse or precedes the recording)."""
        self.index = self._index_of(text)

    def history(self, keep_s: float = KEEP_S) -> History:
        """The samples of the polls in the hour before the cursor (each decoded once per replay)."""
        end = self.polls[self.index].at
        lo = bisect.bisect_left([p.at for p in self.polls], end - keep_s)
        out = History(keep_s)
        for ref in self.polls[lo : self.index + 1]:
            s = self._samples.get(ref.id)
            if s is None:
                s = self._samples[ref.id] = sample(self.recording.snapshot(ref))
            out.samples.append(s)
        return out

    def window_before(self, seconds: float) -> list[Snapshot]:
        """The Snapshots of the `seconds` before the cursor, oldest first (`why --from --at`)."""
        end = self.polls[self.index].at
        refs = [p for p in self.polls[: self.index + 1] if p.at > end - seconds]
        return list(self.recording.snapshots(refs))

    def close(self) -> None:
        self.recording.close()


TREND_S = 300.0  # what a live monitor's per-second history spans (Monitor.history_s)


def with_trends(snap: Snapshot, samples: Sequence[Sample]) -> Snapshot:
    """`snap` with its throughput history and per-queue trends made of the polls' rates (one point
    per recorded poll instead of one per second; a rate not known at a poll leaves no point)."""
    points = tuple(
        ThroughputPoint(
            at=s.at,
            enqueued=round(s.enqueued),
            completed=round(s.completed),
            failed=round(s.failed),
            dead=None,  # a recorded poll's sample keeps no dead rate: unknown, never 0
        )
        for s in samples
        if s.enqueued is not None and s.completed is not None and s.failed is not None
    )
    trends: dict[str, tuple[int, ...]] = {}
    for q in snap.queues:
        done = [p.completed for s in samples if (p := s.queues.get(q.queue)) is not None]
        trends[q.queue] = tuple(round(v) for v in done if v is not None)
    tp = dataclasses.replace(snap.throughput, history=points, queue_history=trends)
    return dataclasses.replace(snap, throughput=tp)


def fmt_time(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M:%S") + (f" {at.tzname()}" if at.tzinfo else "")
