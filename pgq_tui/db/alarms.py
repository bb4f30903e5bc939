"""One thread for every deadline in the process: `after(seconds, fn, *args)` calls `fn(*args)` then,
unless the Alarm it returns is cancelled first.

Why not `threading.Timer`: a Timer is a new OS thread per deadline. The monitor arms one per poll
(db/link.py's Watchdog) and its background counter one per statement: starting and cancelling a
thread cost about 180 us a deadline, and each start contends for the GIL with the poll it guards.
Here an alarm is a heap entry: arming and cancelling cost microseconds. The thread starts on first
use, and again in a forked child (a thread does not survive a fork).

A callback runs on the alarm thread: it must be short and must not block (the Watchdog's shuts a
socket down or re-arms itself). One that raises is ignored, so the others still run.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Alarm", "after"]


class Alarm:
    """One pending call; `cancel()` makes sure it does not run (if it has not started yet)."""

    __slots__ = ("args", "cancelled", "fn")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.fn, self.args = fn, args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True  # a plain store: the alarm thread reads it before calling


class _Clock:
    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, Alarm]] = []
        self._seq = itertools.count()  # ties in time keep their order, never compare Alarms
        self._serving = False  # a thread serves the heap (in this process)
        # a fork can copy the lock held by the parent's alarm thread: the child starts afresh
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._heap = []
        self._serving = False

    def after(self, seconds: float, fn: Callable[..., Any], args: tuple[Any, ...]) -> Alarm:
        alarm = Alarm(fn, args)
        with self._cond:
            if not self._serving:  # first use (or in a forked child)
                self._serving = True
                threading.Thread(target=self._serve, name="pgq-top alarms", daemon=True).start()
            heapq.heappush(self._heap, (time.monotonic() + seconds, next(self._seq), alarm))
            if self._heap[0][2] is alarm:  # sooner than what the thread sleeps for
                self._cond.notify()
        return alarm

    def _serve(self) -> None:
        while True:
            with self._cond:
                while True:
                    while self._heap and self._heap[0][2].cancelled:
                        heapq.heappop(self._heap)
                    wait = self._heap[0][0] - time.monotonic() if self._heap else None
                    if wait is not None and wait <= 0:
                        break
                    self._cond.wait(wait)
                alarm = heapq.heappop(self._heap)[2]
            if not alarm.cancelled:
                with contextlib.suppress(Exception):
                    alarm.fn(*alarm.args)


_CLOCK = _Clock()


def after(seconds: float, fn: Callable[..., Any], *args: Any) -> Alarm:
    """Call `fn(*args)` on the alarm thread `seconds` from now, unless cancelled first."""
    return _CLOCK.after(seconds, fn, args)
