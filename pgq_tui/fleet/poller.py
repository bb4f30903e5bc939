"""FleetPoller: one thread and one Monitor per target, each polling on its own clock.

A target that is slow or gone (a connect that takes its full timeout, a hung network) holds up only
its own thread; the others keep their interval. Readers take `entries()`: immutable copies of what
each target last answered, with the times a screen needs to say how fresh it is.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from pgq_tui.errors import describe
from pgq_tui.fleet.poll import monitor_for
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.targets import Target


@dataclass(frozen=True)
class FleetEntry:
    target: Target
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


class FleetPoller:
    def __init__(
        self,
        targets: Sequence[Target],
        *,
        interval: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.targets = list(targets)
        self.interval = interval
        self.clock = clock
        self._lock = threading.Lock()
        self._entries = {t.name: FleetEntry(t) for t in self.targets}
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
            return [self._entries[t.name] for t in self.targets]

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

    def _update(self, name: str, **changes: object) -> None:
        with self._lock:
            self._entries[name] = replace(self._entries[name], **changes)  # type: ignore[arg-type]

    def _loop(self, target: Target) -> None:
        monitor = monitor_for(target)
        wake = self._wake[target.name]
        try:
            while not self._stop.is_set():
                self._running.wait()
                if self._stop.is_set():
                    break
                started = self.clock()
                self._update(target.name, started_at=started)
                try:
                    snap = monitor.collect()
                except Exception as exc:  # PgqError mostly; nothing may kill a target's thread
                    polls = self._entries[target.name].polls + 1
                    self._update(
                        target.name,
                        error=str(describe(exc)),
                        polls=polls,
                        polled_at=self.clock(),
                        started_at=None,
                    )
                else:
                    now = self.clock()
                    polls = self._entries[target.name].polls + 1
                    self._update(
                        target.name, snapshot=snap, error=None, polls=polls, polled_at=now, ok_at=now,
                        started_at=None,
                    )  # fmt: skip
                # the interval runs from the start of the poll, so a slow poll doesn't drift the clock
                wake.wait(max(0.0, started + self.interval - self.clock()))
                wake.clear()
        finally:
            monitor.close()
