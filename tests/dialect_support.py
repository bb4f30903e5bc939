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
from pgq_tui.detection import find_queues
from pgq_tui.dialects.contract import QueueModel, Statement
from pgq_tui.dialects.introspect import DEFAULTS
from pgq_tui.errors import EXIT_OK
from pgq_tui.monitor.collect import Monitor
from pgq_tui.monitor.snapshot import AT_LEAST, EXACT, STALE, Snapshot


def run(conn: psycopg.Connection, statement: Statement, **params: Any) -> list[dict[str, Any]]:
    """One contract statement with the standard parameters (the engine's DEFAULTS) and `params`."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(statement.compose(), {**DEFAULTS, **params})
        return cur.fetchall() if cur.description else []


# Snapshot.QueueStats field -> canonical state word
FIELDS = {"ready": "ready", "scheduled": "scheduled", "running": "running", "stuck": "stuck",
          "dead": "dead", "done": "done"}  # fmt: skip


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """pgq-top's exit code and what this one run printed (anything captured before is dropped)."""
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def snapshot_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out, err = cli(capsys, "snapshot", "--json", *argv)
    assert (code, err) == (EXIT_OK, ""), err
    return json.loads(out)


def collect(dsn: str, kind: str, *, count_cap: int = 500, settle: bool = False) -> Snapshot:
    """One poll through the dialect; with `settle`, the poll after the background exact count landed."""
    (target,) = find_queues(dsn, kind=kind)
    with Monitor(
        dsn, target.model, count_cap=count_cap, statement_timeout_ms=30_000, count_interval_s=0.1
    ) as monitor:
        snap = monitor.collect()
        if settle:
            assert monitor.settle(60)
            snap = monitor.collect()
        return snap


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


def accuracies(snap: Snapshot) -> dict[tuple[str, str], str]:
    """(queue, canonical state or extra label) -> how the snapshot knows that count."""
    return {(q.queue, FIELDS.get(name, name)): q.accuracy(name) for q in snap.queues for name in q.figures}


def assert_counts_match(
    snap: Snapshot, truth: Counter[tuple[str, str]], cap: int, overall: tuple[str, ...] = ()
) -> None:
    """Every count against ground truth: exact when the poll's capped read saw all of it; above the
    cap a proven lower bound (the cap per queue; the rows seen, for states capped over all queues),
    or the background's exact count (stale: the tables do not move during the test)."""
    got, known = counts(snap), accuracies(snap)
    assert set(got) <= set(truth), set(got) - set(truth)
    over = {s for s in overall if sum(n for (_, st), n in truth.items() if st == s) > cap}
    for key, n in truth.items():
        accuracy, value = known.get(key, EXACT), got.get(key, 0)
        if n <= cap and key[1] not in over:
            assert (value, accuracy) == (n, EXACT), key
        elif accuracy == STALE:
            assert value == n, key
        else:
            assert accuracy == AT_LEAST and value <= n, key
            assert key[1] in overall or value == cap, key


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
