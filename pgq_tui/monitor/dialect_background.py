"""The background exact count for a queue any dialect describes: the dialect's own count statements
with no cap (`cap1` NULL), in one REPEATABLE READ transaction so every count is from one snapshot,
on the counter's own connection and time budget (pacing, cancelling and reporting as in
background.py)."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from psycopg.rows import dict_row

from pgq_tui.db.introspect import DEFAULTS
from pgq_tui.dialects.contract import COUNT_KEY, OLDEST_READY, QueueModel
from pgq_tui.monitor.background import GROUPS, BackgroundCount, BackgroundCounter


def parse(
    rows: list[dict[str, Any]], field_of: dict[str, str], as_of: datetime, cost_ms: float
) -> BackgroundCount:
    """Uncapped count rows -> a BackgroundCount keyed by (queue, count name). Pure."""
    counts: dict[tuple[str, str], int] = {}
    for r in rows:
        for key, value in r.items():
            if key in (COUNT_KEY, OLDEST_READY) or value is None:
                continue
            name = field_of.get(key, key)
            counts[(str(r[COUNT_KEY]), name)] = counts.get((str(r[COUNT_KEY]), name), 0) + int(value)
    return BackgroundCount(as_of, cost_ms, frozenset(GROUPS), counts, max_id=0)


class DialectBackgroundCounter(BackgroundCounter):
    def __init__(self, conninfo: str, model: QueueModel, field_of: dict[str, str], **kw: Any) -> None:
        schema, table = model.relations[0] if model.relations else (model.match.schema, model.match.table)
        super().__init__(conninfo, table, schema, **kw)
        self.model = model
        self.field_of = field_of

    def _count(self, groups: frozenset[str], previous: BackgroundCount | None) -> BackgroundCount:
        conn = self._active = self._session.conn
        started = time.perf_counter()
        rows: list[dict[str, Any]] = []
        with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
            cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            as_of = cur.execute("SELECT now() AS now").fetchone()["now"]  # type: ignore[index]
            for statement in self.model.counts:
                cur.execute(statement.compose(), {**DEFAULTS, "cap1": None})
                rows += cur.fetchall()
        return parse(rows, self.field_of, as_of, (time.perf_counter() - started) * 1000)
