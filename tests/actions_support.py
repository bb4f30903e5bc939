"""The actions engine on pgq-top's own table, the way the dashboard opens it: detected as a dialect."""

from __future__ import annotations

from typing import Any

from pgq_tui.actions import Actions
from pgq_tui.detection import find_queues
from pgq_tui.dialects.contract import QueueModel


def pgq_model(dsn: str, table: str = "jobs", schema: str = "public") -> QueueModel:
    (target,) = find_queues(dsn, kind="pgq", schema=schema, table=table)
    return target.model


def pgq_actions(dsn: str, **kw: Any) -> Actions:
    """Actions over the pgq dialect of `public.jobs` (read_only, batch, timeouts as keywords)."""
    return Actions(dsn, pgq_model(dsn), **kw)
