"""The snapshot seam: what a dashboard, a recorder or an exporter polls (a Monitor satisfies it)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pgq_tui.monitor.snapshot import Snapshot


@runtime_checkable
class SnapshotSource(Protocol):
    def collect(self) -> Snapshot: ...
