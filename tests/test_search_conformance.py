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

from pgq_tui.dialects import registry
from pgq_tui.dialects.detect import detect
from pgq_tui.dialects.introspect import read_catalog
from pgq_tui.search.query import parse
from pgq_tui.search.run import search

SEARCHABLE = ("pgq", "river", "oban", "procrastinate", "graphile-worker", "pgqueuer", "solid-queue")
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
    assert sum(truth.values()) == sum(
        search(dsn, model, parse(f"state:{w}", now), limit_scan=None).matched for w, _ in model.search.states
    )


def test_queue_terms_find_exactly_the_truth(populated) -> None:
    case, dsn, conn, model = populated
    now = datetime.now(timezone.utc)
    per_queue = Counter(j.queue for j in case.truth(conn))
    for queue, n in per_queue.items():
        result = search(dsn, model, parse(f'queue:"{queue}"', now), limit_scan=None, rows=1000)
        assert result.matched == n and {r["queue"] for r in result.rows} == {queue}, queue
