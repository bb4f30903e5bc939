"""The monitor of pgq-top's own table, opened the way the dashboard opens any queue: detection finds
the table (as the pgq dialect), and the one Monitor polls it through that dialect's QueueModel."""

from __future__ import annotations

from typing import Any

from actions_support import pgq_model

from pgq_tui.monitor.collect import Monitor, open_monitor


def pgq_monitor(dsn: str, table: str = "jobs", schema: str = "public", **kw: Any) -> Monitor:
    return open_monitor(dsn, pgq_model(dsn, table, schema), **kw)
