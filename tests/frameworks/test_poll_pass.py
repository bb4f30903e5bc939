"""pg-boss 12.38's poll walks each queue's active range once for the running and stuck counts and the
lease list (its Pass, contract.Pass): the figures are those the two statements give run alone, the
two are never sent, and a failed walk makes both unknown, never 0. On pg-boss's own schema, installed
by its own client (Node 22), filled with jobs of every state."""

from __future__ import annotations

import dataclasses
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from pgq_tui.detection import single_queue
from pgq_tui.dialects.contract import Pass, Statement
from pgq_tui.dialects.introspect import DEFAULTS
from pgq_tui.monitor import collect

from .fills import fill
from .pgboss_client import PgBoss12

QUEUES = [f"q{i}" for i in range(5)]


@pytest.fixture
def boss(framework_dsn: str, monkeypatch: pytest.MonkeyPatch) -> str:
    PgBoss12.version()
    monkeypatch.setenv("PGQ_TEST_QUEUES", ",".join(QUEUES))  # pg-boss's install creates each queue
    PgBoss12(framework_dsn).install()
    fill(framework_dsn, "pg-boss", 5_000, QUEUES, layout="pg-boss-12")  # 50 active, 10 of them stuck
    return framework_dsn


def sent_names(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the model statements each poll's pipelines send (recorded as they go)."""
    names: list[str] = []
    real = collect.pipeline.run

    def run(conn: psycopg.Connection, statements: Any) -> Any:
        names.extend(key[1] for key, _, _ in statements if key[0] == "model")
        return real(conn, statements)

    monkeypatch.setattr(collect.pipeline, "run", run)
    return names


def test_the_active_range_is_walked_once_for_the_counts_and_the_lease_list(
    boss: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = single_queue(boss, kind="pg-boss").model
    (one,) = model.passes
    count, leases = one.covers
    assert one.statement.indexed and count in model.counts and leases is model.leases
    sent = sent_names(monkeypatch)
    with collect.Monitor(boss, model, read_only=True, count_cap=5) as monitor:
        snap = monitor.collect()
        cap1, rows = monitor.cap + 1, monitor.lease_rows
    assert one.statement.name in sent and count.name not in sent and leases.name not in sent
    with psycopg.connect(boss, autocommit=True, row_factory=dict_row) as conn:
        alone = conn.execute(count.compose(), {**DEFAULTS, "cap1": cap1}).fetchall()
        listed = conn.execute(leases.compose(), {**DEFAULTS, "rows": rows}).fetchall()
    # the capped counts as the count statement reads them (10 active a queue, 10 stuck in all: cap 5
    # caps each running count, not the stuck ones)
    assert all(r["running"] == cap1 for r in alone) and sum(r["stuck"] for r in alone) == 10
    assert {(q.queue, q.running, q.stuck) for q in snap.queues} == {  # a capped count shows "≥ cap"
        (r["queue"], min(r["running"], cap1 - 1), r["stuck"]) for r in alone
    }
    assert {q.accuracy("running") for q in snap.queues} == {"at_least"}
    assert {q.accuracy("stuck") for q in snap.queues} == {"exact"} and sum(
        q.stuck or 0 for q in snap.queues
    ) == 10
    shown = [r.id for r in snap.stuck.rows] + [r.id for r in snap.leases.rows]
    assert sorted(shown) == sorted(r["id"] for r in listed) and len(shown) == 50
    assert [r.id for r in snap.stuck.rows] == [r["id"] for r in listed if r["stuck"]]


def test_a_failed_walk_makes_the_counts_and_the_list_unknown(boss: str) -> None:
    model = single_queue(boss, kind="pg-boss").model
    (one,) = model.passes
    broken = Statement.of(one.statement.name, "SELECT 1 / 0 AS pgq_part", one.statement.columns)
    model = dataclasses.replace(model, passes=(Pass(broken, one.covers),))
    with collect.Monitor(boss, model, read_only=True) as monitor:
        snap = monitor.collect()
    assert "division by zero" in snap.errors["leases"] and "division by zero" in snap.errors["queues"]
    assert {"running", "stuck"} <= set(snap.unknown)
    assert all(q.running is None and q.stuck is None for q in snap.queues)
    assert snap.leases.total is None and snap.stuck.total is None
    # the other counts stand
    assert all(q.ready is not None for q in snap.queues)
