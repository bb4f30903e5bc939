"""Helpers for the framework dialect tests (River, Oban, Solid Queue): the CLI in-process, a Snapshot
through the dialect with a chosen count cap, and its counts in canonical words for comparing with
ground-truth SQL."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from pgq_tui.cli import main
from pgq_tui.db.introspect import DEFAULTS
from pgq_tui.dialects.contract import QueueModel
from pgq_tui.errors import EXIT_OK
from pgq_tui.monitor.dialect_monitor import DialectMonitor
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.target import find_targets

# Snapshot.QueueStats field -> canonical state word
FIELDS = {"ready": "ready", "scheduled": "scheduled", "running": "running", "expired": "stuck",
          "failed": "dead", "done": "done"}  # fmt: skip


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def snapshot_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out, err = cli(capsys, "snapshot", "--json", *argv)
    assert (code, err) == (EXIT_OK, ""), err
    return json.loads(out)


def collect(dsn: str, kind: str, *, count_cap: int = 500) -> Snapshot:
    (target,) = find_targets(dsn, kind=kind)
    monitor = DialectMonitor(dsn, target.model, count_cap=count_cap, statement_timeout_ms=30_000)
    try:
        return monitor.collect()
    finally:
        monitor.close()


def counts(snap: Snapshot) -> Counter[tuple[str, str]]:
    """Every non-zero count of the snapshot as (queue, canonical state or extra label) -> n."""
    out: Counter[tuple[str, str]] = Counter()
    for q in snap.queues:
        for field, state in FIELDS.items():
            if getattr(q, field):
                out[(q.queue, state)] = getattr(q, field)
        for label, n in q.extra.items():
            if n:
                out[(q.queue, label)] = n
    return out


def approximate(snap: Snapshot) -> set[tuple[str, str]]:
    return {(q.queue, FIELDS.get(f, f)) for q in snap.queues for f in q.approximate_fields}


def assert_counts_match(snap: Snapshot, truth: Counter[tuple[str, str]], cap: int) -> None:
    """Counts at or below the cap are exact and unflagged; above it they read cap + 1, flagged."""
    got = counts(snap)
    assert set(got) == set(truth), (got, truth)
    for key, n in truth.items():
        if n > cap:
            assert (got[key], key in approximate(snap)) == (cap + 1, True), key
        else:
            assert (got[key], key in approximate(snap)) == (n, False), key


def row(conn: psycopg.Connection, query: str, *params: Any) -> dict[str, Any]:
    with conn.cursor(row_factory=dict_row) as cur:
        found = cur.execute(query, params).fetchone()
    assert found is not None, query
    return found


def seq_scanned(conn: psycopg.Connection, model: QueueModel) -> set[str]:
    """Relations that a poll statement (counts, leases, dead) can only read with a sequential scan:
    EXPLAIN with sequential scans disabled still shows one where no index serves the read."""
    found: set[str] = set()

    def walk(node: dict[str, Any]) -> None:
        if node.get("Node Type") == "Seq Scan":
            found.add(node["Relation Name"])
        for child in node.get("Plans", ()):
            walk(child)

    statements = [s for s in (*model.counts, model.leases, model.dead) if s is not None]
    with conn.transaction(force_rollback=True):
        conn.execute("SET LOCAL enable_seqscan = off")
        for statement in statements:
            explain = psycopg.sql.SQL("EXPLAIN (FORMAT JSON) ") + statement.compose()
            (plan,) = conn.execute(explain, {**DEFAULTS, "cap1": 501, "rows": 50}).fetchone()  # type: ignore[misc]
            walk(plan[0]["Plan"])
    return found
