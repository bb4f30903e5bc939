"""How the worker pool supervises its processes: when to restart one that died, when to give up, and
how to say why it died. Pure functions and plain data; the pool (pool.py) does the processes.

A worker dies when it meets an error it cannot ride out by reconnecting: a permission revoked, the
DSN landing on a standby after a failover (read-only), a bug. The pool restarts it after a backoff
that doubles with each crash of that worker slot within `crash_window` seconds, and gives up (stops
every worker and reports why) when one slot crashes `crash_limit` times in that window: a crash that
repeats that fast will not fix itself, and a supervisor above us (systemd, Kubernetes, an operator)
should hear about it through a non-zero exit instead of a pool quietly running no workers.
"""

from __future__ import annotations

import signal
import traceback
from ctypes import Array, c_char
from dataclasses import dataclass

import psycopg

from pgq_tui.errors import first_line

REASON_BYTES = 512  # a dying worker's one line, in shared memory the pool reads after it exits


@dataclass(frozen=True)
class RestartPolicy:
    backoff: float = 0.5  # first restart delay after a crash, doubled per crash within the window
    backoff_max: float = 30.0
    crash_limit: int = 5  # this many crashes of one worker slot within crash_window: give up
    crash_window: float = 60.0

    def delay(self, crashes: int) -> float:
        """Seconds before restarting a worker whose slot crashed `crashes` times within the window.

        >>> [RestartPolicy().delay(n) for n in (1, 2, 3, 4)], RestartPolicy(backoff_max=3).delay(9)
        ([0.5, 1.0, 2.0, 4.0], 3.0)
        """
        return float(min(self.backoff_max, self.backoff * 2 ** max(0, crashes - 1)))

    def recent(self, crash_times: tuple[float, ...], now: float) -> tuple[float, ...]:
        """The crash times still inside the window.

        >>> RestartPolicy(crash_window=60).recent((1.0, 50.0, 100.0), now=105.0)
        (50.0, 100.0)
        """
        return tuple(t for t in crash_times if now - t <= self.crash_window)

    def gives_up(self, crashes: int) -> bool:
        return crashes >= self.crash_limit


@dataclass(frozen=True)
class WorkerExit:
    """A worker process that ended without the pool asking it to."""

    worker_id: str
    pid: int | None
    exitcode: int | None  # negative: killed by that signal
    reason: str  # one line: the error it died of, or how it ended
    on_purpose: bool  # kill_worker() (chaos): replaced at once, not counted as a crash
    at: float  # time.monotonic()

    def describe(self) -> str:
        return f"worker {self.worker_id} (pid {self.pid}) {self.reason}"


def crash_reason(exc: BaseException) -> str:
    """One line saying what a worker died of: the error, and where, for anything but a database error.

    >>> crash_reason(KeyError("x")).startswith("died of KeyError: 'x'")
    True
    """
    text = first_line(str(exc)) if str(exc) else ""
    line = f"died of {type(exc).__name__}" + (f": {text}" if text else "")
    if not isinstance(exc, psycopg.Error):
        frames = traceback.extract_tb(exc.__traceback__)
        if frames:
            line += f" (at {frames[-1].filename}:{frames[-1].lineno})"
    return line


def exit_reason(exitcode: int | None, written: str) -> str:
    """How a worker ended, from its exit status and the line it left (if it had the chance).

    >>> exit_reason(-9, ""), exit_reason(1, "died of ReadOnlySqlTransaction: ..."), exit_reason(3, "")
    ('was killed by SIGKILL', 'died of ReadOnlySqlTransaction: ...', 'exited with status 3')
    """
    if written:
        return written
    if exitcode is not None and exitcode < 0:
        try:
            return f"was killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"was killed by signal {-exitcode}"
    return f"exited with status {exitcode}"


def write_reason(buffer: Array[c_char], text: str) -> None:
    """Leave `text` (cut to fit, on a character boundary) where the pool will read it."""
    data = text.encode("utf-8")[: REASON_BYTES - 1]
    buffer.value = data.decode("utf-8", "ignore").encode("utf-8")


def read_reason(buffer: Array[c_char]) -> str:
    return buffer.value.decode("utf-8", "replace")
