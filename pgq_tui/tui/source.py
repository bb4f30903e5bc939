"""What the app polls: anything with `collect() -> Snapshot` (a Monitor), or a plain callable.

Tests inject a fixed Snapshot this way; the app never constructs a Monitor itself.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.monitor.source import SnapshotSource as SnapshotSource  # the seam, below the TUI


class CallableSource:
    """Adapts `lambda: snapshot` to the SnapshotSource shape."""

    def __init__(self, fn: Callable[[], Snapshot]) -> None:
        self._fn = fn

    def collect(self) -> Snapshot:
        return self._fn()

    def close(self) -> None:
        pass


def as_source(obj: SnapshotSource | Callable[[], Snapshot]) -> SnapshotSource:
    if isinstance(obj, SnapshotSource):  # runtime_checkable: it has a collect()
        return obj
    if callable(obj):
        return CallableSource(obj)
    raise TypeError(f"not a snapshot source: {obj!r}")


def close_quietly(obj: Any) -> None:
    close = getattr(obj, "close", None)
    if close is not None:
        # Closing a dead connection must not mask why we are exiting.
        with contextlib.suppress(Exception):
            close()
