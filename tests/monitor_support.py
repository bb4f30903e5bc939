"""The monitor of pgq-top's own table, opened the way the dashboard opens any queue: detection finds
the table (as the pgq dialect), and the one Monitor polls it through that dialect's QueueModel."""

from __future__ import annotations

from typing import Any

import psycopg
from actions_support import pgq_model

from pgq_tui.detection import single_queue
from pgq_tui.monitor.collect import Monitor, open_monitor
from pgq_tui.monitor.snapshot import Rates, Snapshot, Throughput


def pgq_monitor(dsn: str, table: str = "jobs", schema: str = "public", **kw: Any) -> Monitor:
    return open_monitor(dsn, pgq_model(dsn, table, schema), **kw)


def collect(
    conninfo: str,
    *,
    kind: str | None = None,
    schema: str | None = None,
    table: str | None = None,
    mapping: str | None = None,
    **kw: Any,
) -> Snapshot:
    """One Snapshot of the one queue detection finds (several that fit the flags: a usage error)."""
    target = single_queue(conninfo, kind=kind, schema=schema, table=table, mapping=mapping)
    with open_monitor(conninfo, target.model, **kw) as monitor:
        return monitor.collect()


def empty_throughput(rate_window_s: int) -> Throughput:
    """No jobs counted yet (for Snapshots built by hand)."""
    zero = Rates(0.0, 0.0, 0.0, 0.0)
    return Throughput(interval_s=float(rate_window_s), total=zero, per_queue={}, history=(), queue_history={})


def slow_scans(dsn: str, rows: int = 100_000) -> None:
    """Keep `rows` done jobs in the seed `jobs` table, so that each of its scans takes several ms: a
    background statement_timeout of 1 ms is then missed by every scan (each background statement runs
    on its own, and a scan of a small table can finish within 1 ms)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO jobs (queue, payload, status)"
            " SELECT 'mail', '{}', 'done' FROM generate_series(1, %s)",
            [rows],
        )
