"""One collect per scrape, at most one per `min_interval_s`: scrapes closer together than that (two
Prometheus replicas, a curl by hand) get the snapshot already taken, so scrapers don't multiply the
load on the database. Concurrent scrapes wait for the collect in flight rather than start their own.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TextIO

from pgq_tui.errors import EXIT_OK, PgqError, describe
from pgq_tui.exporter.counters import ThroughputCounters
from pgq_tui.monitor.snapshot import Snapshot


class SnapshotSource(Protocol):
    def collect(self) -> Snapshot: ...


@dataclass(frozen=True)
class ExporterState:
    snapshot: Snapshot | None  # None while the database does not answer: no stale figures
    error: PgqError | None  # why the last collect failed, else None
    collects: int  # collects attempted
    failures: int  # of which failed
    counters: ThroughputCounters

    @property
    def error_code(self) -> int:
        """pgq-top's exit code for the last collect's error (3 connect, 4 table, 5 privilege), else 0."""
        return self.error.exit_code if self.error is not None else EXIT_OK


class SnapshotCache:
    def __init__(
        self,
        source: SnapshotSource,
        *,
        min_interval_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        log: TextIO | None = None,
    ) -> None:
        self.source = source
        self.min_interval_s = min_interval_s
        self.clock = clock
        self.log = log if log is not None else sys.stderr
        self.counters = ThroughputCounters()
        self._lock = threading.Lock()
        self._at: float | None = None
        self._state = ExporterState(None, None, 0, 0, self.counters)

    def get(self) -> ExporterState:
        with self._lock:
            if self._at is None or self.clock() - self._at >= self.min_interval_s:
                self._state = self._collect()
                self._at = self.clock()
            return self._state

    def _collect(self) -> ExporterState:
        prev = self._state
        try:
            snap = self.source.collect()
        except Exception as exc:  # PgqError when the server is away; never let a scrape crash us
            error = describe(exc)
            if prev.error is None or str(prev.error) != str(error):
                print(f"pgq-top exporter: collect failed: {error}", file=self.log, flush=True)
            return ExporterState(None, error, prev.collects + 1, prev.failures + 1, self.counters)
        if prev.error is not None:
            print("pgq-top exporter: collect works again", file=self.log, flush=True)
        if "throughput" not in snap.errors and snap.throughput.source == "counters":
            self.counters.add(snap.throughput)  # only the counters table's buckets are real counts
        return ExporterState(snap, None, prev.collects + 1, prev.failures, self.counters)
