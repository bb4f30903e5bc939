"""DetectingMonitor: a Monitor for the queue that detection finds, detected at the first poll that
reaches the server and again after a failed poll until it is found.

For long-running watchers (the exporter, the fleet's pollers) that must start while the database is
down or the queue not there yet, and report that as a failed poll (a one-line PgqError) rather than
not start at all. Once found, every poll is the found queue's Monitor.collect().
"""

from __future__ import annotations

from typing import Any

from pgq_tui.detection import single_queue
from pgq_tui.monitor.collect import Monitor, open_monitor
from pgq_tui.monitor.snapshot import Snapshot


class DetectingMonitor:
    """Not thread-safe, like Monitor. `kind/schema/table/mapping` are the flags detection takes."""

    def __init__(
        self,
        conninfo: str,
        *,
        kind: str | None = None,
        schema: str | None = None,
        table: str | None = None,
        mapping: str | None = None,
        **monitor_kw: Any,
    ) -> None:
        self.conninfo = conninfo
        self._flags = {"kind": kind, "schema": schema, "table": table, "mapping": mapping}
        self._kw = monitor_kw
        self.monitor: Monitor | None = None

    def collect(self) -> Snapshot:
        """One Snapshot; raises PgqError (cannot connect, no such queue, no privilege) like Monitor."""
        if self.monitor is None:
            target = single_queue(self.conninfo, **self._flags)
            self.monitor = open_monitor(self.conninfo, target.model, **self._kw)
        return self.monitor.collect()

    @property
    def pid(self) -> int | None:
        return self.monitor.pid if self.monitor is not None else None

    def settle(self, timeout: float) -> bool:
        return self.monitor.settle(timeout) if self.monitor is not None else True

    def close(self) -> None:
        if self.monitor is not None:
            self.monitor.close()

    def __enter__(self) -> DetectingMonitor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
