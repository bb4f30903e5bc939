"""The search language on each searchable kind's stock schema (tests/dialect_cases): `state:W`
finds exactly the jobs the case's ground truth puts in W, each listed in that state (#32)."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from datetime import datetime, timezone

import psycopg
import pytest
from dialect_cases import DialectCase, all_cases
from psycopg import sql
from psycopg.conninfo import make_conninfo

from pgq_tui.actions import Actions
from pgq_tui.audit import AuditLog
from pgq_tui.dialects import registry
from pgq_tui.dialects.contract import ActionKind
from pgq_tui.dialects.detect import detect
from pgq_tui.dialects.introspect import read_catalog
from pgq_tui.search.compile import compile_query
from pgq_tui.search.query import parse
from pgq_tui.search.run import search, still_matching

SEARCHABLE = (
    "pgq",
    "river",
    "oban",
    "procrastinate",
    "graphile-worker",
    "pgqueuer",
    "solid-queue",
    "pg-boss",
    "seed-jobs",
    "seed-job-queue",
    "pgmq",
)
CASES = [pytest.param(c, id=c.id, marks=c.marks) for c in all_cases() if c.kind in SEARCHABLE]


@pytest.fixture(params=CASES)
def populated(request: pytest.FixtureRequest, server_dsn: str):
    case: DialectCase = request.param
    name = f"pgq_s_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = make_conninfo(server_dsn, dbname=name)
    try:
        case.install(dsn)
        case.populate(dsn)
        time.sleep(0.05)
        with psycopg.connect(dsn, autocommit=True) as conn:
            dialects = (*case.dialects(), *registry.builtin())
            catalog = read_catalog(conn, dialects)
            (match,) = [m for m in detect(catalog, dialects) if m.kind == case.kind]
            model = next(d for d in dialects if d.kind == case.kind).model(match, catalog)
            yield case, dsn, conn, model
    finally:
        with psycopg.connect(server_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def test_state_terms_find_exactly_the_truth(populated) -> None:
    case, dsn, conn, model = populated
    assert model.search is not None, f"{case.kind} declares no search columns"
    now = datetime.now(timezone.utc)
    truth = Counter(j.state for j in case.truth(conn))
    for word, _ in model.search.states:
        result = search(dsn, model, parse(f"state:{word}", now), limit_scan=None, rows=1000)
        assert result.matched == truth.get(word, 0), word
        assert {r["state"] for r in result.rows} <= {word}, word
    declared = [w for w, _ in model.search.states]
    assert sum(n for w, n in truth.items() if w in declared) == sum(
        search(dsn, model, parse(f"state:{w}", now), limit_scan=None).matched for w in declared
    )


def test_queue_terms_find_exactly_the_truth(populated) -> None:
    case, dsn, conn, model = populated
    now = datetime.now(timezone.utc)
    per_queue = Counter(j.queue for j in case.truth(conn))
    for queue, n in per_queue.items():
        result = search(dsn, model, parse(f'queue:"{queue}"', now), limit_scan=None, rows=1000)
        assert result.matched == n and {r["queue"] for r in result.rows} == {queue}, queue


def test_retry_where_state_dead_retries_every_dead_job(populated, tmp_path) -> None:
    """The bulk path on each kind: the matches' ids (ints or uuids) through the kind's own retry, each
    batch rechecking the search; afterwards nothing is dead."""
    case, dsn, _conn, model = populated
    if model.action(ActionKind.RETRY) is None:
        pytest.skip(f"{case.kind} has no retry")
    query = parse("state:dead", datetime.now(timezone.utc))
    dead = search(dsn, model, query, limit_scan=None, all_ids=True)
    if not dead.ids:
        pytest.skip(f"{case.id} populates no dead job")
    with Actions(dsn, model, audit=AuditLog(tmp_path / "a.jsonl"), batch=2) as actions:
        plan = actions.plan(ActionKind.RETRY, dead.ids)
        assert plan.refused is None, plan.refused
        outcome = actions.execute(plan, recheck=still_matching(compile_query(query, model)))
    assert outcome.error is None and outcome.changed == dead.matched
    assert search(dsn, model, query, limit_scan=None).matched == 0
