"""FleetPoller: one thread per target, each polling on its own clock.

Each thread detects its target's queues (fleet.poll.TargetWatch: the target's pins, or every queue
the database holds) and polls each through its dialect. A target that is slow or gone (a connect that
takes its full timeout, a hung network) holds up only its own thread; the others keep their interval.
Readers take `entries()`: immutable copies of what each queue last answered (one entry per target
until its detection succeeds), with the times a screen needs to say how fresh it is.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pgq_tui.detection import QueueTarget
from pgq_tui.fleet.poll import QueueOutcome, TargetWatch
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.targets import Target


@dataclass(frozen=True)
class FleetEntry:
    target: Target
    queue: QueueTarget | None = None  # None until the target's queues are detected
    tag: str = ""  # the queue among its target's others (its kind...), "" when it is the only one
    snapshot: Snapshot | None = None  # the last good one (kept while down, shown as stale)
    error: str | None = None  # set while the last poll failed
    polls: int = 0  # polls finished, good or not
    polled_at: float | None = None  # clock() when the last poll finished
    ok_at: float | None = None  # clock() when the last good poll finished
    started_at: float | None = None  # clock() when the poll in flight started; None when idle

    @property
    def up(self) -> bool | None:
        """None until the first poll has finished."""
        return None if self.polls == 0 else self.error is None

    @property
    def key(self) -> str:
        """Unique in the fleet: the target's name, and the queue's tag when it holds several."""
        return f"{self.target.name}/{self.tag}" if self.tag else self.target.name


class FleetPoller:
    def __init__(
        self,
        targets: Sequence[Target],
        *,
        interval: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
        **monitor_kw: Any,
    ) -> None:
        """monitor_kw: what each queue's monitor is opened with (count_cap, probe_interval_s), as
        the dashboard's flags say."""
        self.monitor_kw = monitor_kw
        self.targets = list(targets)
        self.interval = interval
        self.clock = clock
        self._lock = threading.Lock()
        self._entries = {t.name: [FleetEntry(t)] for t in self.targets}
        self._stop = threading.Event()
        self._running = threading.Event()  # cleared: paused (the dashboard of one target is open)
        self._running.set()
        self._wake = {t.name: threading.Event() for t in self.targets}
        self._threads: list[threading.Thread] = []

    def start(self) -> FleetPoller:
        for target in self.targets:
            thread = threading.Thread(target=self._loop, args=(target,), daemon=True, name=target.name)
            thread.start()
            self._threads.append(thread)
        return self

    def entries(self) -> list[FleetEntry]:
        with self._lock:
            return [e for t in self.targets for e in self._entries[t.name]]

    def entry(self, key: str) -> FleetEntry | None:
        return next((e for e in self.entries() if e.key == key), None)

    def pause(self) -> None:
        self._running.clear()

    def resume(self) -> None:
        self._running.set()
        self.refresh()

    def refresh(self) -> None:
        """Poll every target now (each as soon as its current poll, if any, is done)."""
        for wake in self._wake.values():
            wake.set()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        self._running.set()
        self.refresh()
        for thread in self._threads:
            thread.join(timeout)  # daemon threads: one stuck in a connect dies with the process

    def _started(self, name: str, at: float) -> None:
        with self._lock:
            self._entries[name] = [replace(e, started_at=at) for e in self._entries[name]]

    def _finished(self, target: Target, watch: TargetWatch, outcomes: list[QueueOutcome]) -> None:
        """Each queue's new entry, keeping its last good snapshot while it is down."""
        now = self.clock()
        with self._lock:
            before = {e.key: e for e in self._entries[target.name]}
            entries = []
            for o in outcomes:
                tag = watch.tag(o.queue) if o.queue is not None and o.several else ""
                old = before.get(FleetEntry(target, o.queue, tag).key) or FleetEntry(target, o.queue, tag)
                if isinstance(o.outcome, Snapshot):
                    changes: dict[str, object] = {"snapshot": o.outcome, "error": None, "ok_at": now}
                else:
                    changes = {"error": str(o.outcome)}
                entries.append(
                    replace(old, queue=o.queue, tag=tag, polls=old.polls + 1, polled_at=now,
                            started_at=None, **changes)  # type: ignore[arg-type]
                )  # fmt: skip
            self._entries[target.name] = entries

    def _loop(self, target: Target) -> None:
        watch = TargetWatch(target, **self.monitor_kw)
        wake = self._wake[target.name]
        try:
            while not self._stop.is_set():
                self._running.wait()
                if self._stop.is_set():
                    break
                started = self.clock()
                self._started(target.name, started)
                self._finished(target, watch, watch.collect())  # never raises: errors are outcomes
                # the interval runs from the start of the poll, so a slow poll doesn't drift the clock
                wake.wait(max(0.0, started + self.interval - self.clock()))
                wake.clear()
        finally:
            watch.close()
