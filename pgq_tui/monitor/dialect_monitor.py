"""Where `open_monitor` used to live beside a second monitor class: one Monitor now serves every
dialect (monitor/collect.py). Kept so `from pgq_tui.monitor.dialect_monitor import open_monitor`
keeps working; `from pgq_tui.monitor import open_monitor` is the short form."""

from __future__ import annotations

from pgq_tui.monitor.collect import Monitor, open_monitor

__all__ = ["Monitor", "open_monitor"]
