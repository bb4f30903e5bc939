"""One collect per scrape, at most one per `min_interval_s`: scrapes closer together than that (two
Prometheus replicas, a curl by hand) get the snapshot already taken, so scrapers don't multiply the
load on the database. Concurrent scrapes wait for the collect in flight rather than start their own.

A collect polls every queue the database holds (fleet.poll.TargetWatch: detection, then one
monitor per queue); each queue's outcome is its Snapshot or why not.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TextIO

from pgq_tui.errors import EXIT_OK, PgqError
from pgq_tui.exporter.counters import ThroughputCounters
from pgq_tui.fleet.poll import QueueOutcome
from pgq_tui.monitor.snapshot import Snapshot


class QueueSource(Protocol):
    def collect(self) -> list[QueueOutcome]: ...


@dataclass(frozen=True)
class ExporterState:
    queues: tuple[QueueOutcome, ...]  # the last collect, one per queue (a Snapshot or why not)
    collects: int  # collects attempted
    failures: int  # of which failed (some queue could not be read)
    counters: dict[str, ThroughputCounters]  # QueueOutcome.key -> that queue's counters

    @property
    def snapshots(self) -> list[tuple[QueueOutcome, Snapshot]]:
        """The queues read at the last collect (none while the database does not answer)."""
        return [(o, o.outcome) for o in self.queues if isinstance(o.outcome, Snapshot)]

    @property
    def error(self) -> PgqError | None:
        """Why the last collect failed (the first queue that could not be read), else None."""
        return next((o.outcome for o in self.queues if isinstance(o.outcome, PgqError)), None)

    @property
    def up(self) -> bool:
        return bool(self.queues) and self.error is None

    @property
    def error_code(self) -> int:
        """pgq-top's exit code for the last collect's error (3 connect, 4 table, 5 privilege, 8-11 by
        SQLSTATE class: errors.py), else 0."""
        error = self.error
        return error.exit_code if error is not None else EXIT_OK


class SnapshotCache:
    def __init__(
        self,
        source: QueueSource,
        *,
        min_interval_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        log: TextIO | None = None,
    ) -> None:
        self.source = source
        self.min_interval_s = min_interval_s
        self.clock = clock
        self.log = log if log is not None else sys.stderr
        self.counters: dict[str, ThroughputCounters] = {}
        self._lock = threading.Lock()
        self._at: float | None = None
        self._state = ExporterState((), 0, 0, self.counters)

    def get(self) -> ExporterState:
        with self._lock:
            if self._at is None or self.clock() - self._at >= self.min_interval_s:
                self._state = self._collect()
                self._at = self.clock()
            return self._state

    def _collect(self) -> ExporterState:
        prev = self._state
        queues = tuple(self.source.collect())  # never raises: each queue says why it failed
        state = ExporterState(queues, prev.collects + 1, prev.failures, self.counters)
        error, before = state.error, prev.error
        if error is not None:
            state = ExporterState(queues, state.collects, prev.failures + 1, self.counters)
            if before is None or str(before) != str(error):
                failed = next(o for o in queues if o.outcome is error)
                where = f"{failed.kind} {failed.table}: " if failed.queue is not None else ""
                print(f"pgq-top exporter: collect failed: {where}{error}", file=self.log, flush=True)
        elif before is not None:
            print("pgq-top exporter: collect works again", file=self.log, flush=True)
        for o, snap in state.snapshots:
            if "throughput" not in snap.errors and snap.throughput.source == "counters":
                # only a counters table's buckets are real counts
                self.counters.setdefault(o.key, ThroughputCounters()).add(snap.throughput)
        return state
