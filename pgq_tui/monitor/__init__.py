"""The monitor: `open_monitor(conninfo, model)` -> a Monitor whose collect() returns a Snapshot.

Imported lazily, so that `pgq_tui.monitor.snapshot` and the other pure modules stay light to import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the types, for the checker; at run time __getattr__ imports them on first use
    from pgq_tui.monitor.collect import Monitor, open_monitor

__all__ = ["Monitor", "open_monitor"]


def __getattr__(name: str) -> Any:
    if name in ("Monitor", "open_monitor"):
        from pgq_tui.monitor import collect

        return getattr(collect, name)
    raise AttributeError(name)
