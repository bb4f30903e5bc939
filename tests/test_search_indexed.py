"""A state: term served by the kind's own index reads every job of that state through it (#32).

The reviewer's scenario: 2,000 old dead "invalid card" jobs, then 150,000 newer ones, pgq-top's own
failed-jobs index present. The newest 100,000 jobs hold none of the dead ones, so the bounded scan
found 0; the failed-jobs index holds exactly the 2,000, so the search reads them all through it: the
CLI's listing, the bulk retry's plan and the dashboard's search panel. EXPLAIN shows the index
walked (no Seq Scan on the job table) on pgq-top's table and on River's and Oban's stock schemas.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import psycopg
import pytest
from actions_support import pgq_model
from dialect_cases import all_cases
from psycopg import sql
from psycopg.conninfo import make_conninfo
from textual.widgets import DataTable

from pgq_tui.cli import main
from pgq_tui.dialects import registry
from pgq_tui.dialects.contract import QueueModel
from pgq_tui.dialects.detect import detect
from pgq_tui.dialects.introspect import read_catalog
from pgq_tui.search.compile import (
    compile_query,
    ids_statement,
    plan_reads,
    rows_statement,
    state_rows_statement,
)
from pgq_tui.search.query import parse
from pgq_tui.search.run import search
from tests.test_tui_app import plain
from tests.test_tui_search import _search, dashboard

CARD = 'state:dead error:~"invalid card"'
OLD_DEAD, NEWER = 2_000, 150_000


@pytest.fixture
def buried(dsn: str) -> Iterator[str]:
    """2,000 dead 'invalid card' jobs (the lowest ids), then 150,000 newer done and pending ones."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO jobs (queue, payload, status, attempts, finished_at, last_error)"
            " SELECT 'payments', jsonb_build_object('n', n), 'failed', 5, now(), 'CardError: invalid card'"
            " FROM generate_series(1, %s) n",
            (OLD_DEAD,),
        )
        conn.execute(
            "INSERT INTO jobs (queue, payload, status, finished_at)"
            " SELECT 'payments', jsonb_build_object('n', n), CASE WHEN n %% 10 = 0 THEN 'pending' ELSE 'done'"
            " END, CASE WHEN n %% 10 = 0 THEN NULL ELSE now() END FROM generate_series(1, %s) n",
            (NEWER,),
        )
        conn.execute("ANALYZE jobs")
    yield dsn


def test_the_bounded_scan_alone_misses_them(buried: str) -> None:
    """What the reviewer saw, still what an unserved search does: the newest 100,000 hold none."""
    model = pgq_model(buried)
    assert model.search is not None
    unserved = replace(model, search=replace(model.search, indexed_states=()))
    result = search(buried, unserved, parse(CARD, datetime.now(timezone.utc)))
    assert result.matched == 0 and result.through is None
    assert result.summary() == "newest 100,000 jobs searched (older ones were not); 0 match"


def test_jobs_where_finds_all_2000_through_the_failed_jobs_index(
    buried: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["jobs", "--dsn", buried, "--where", CARD, "--json", "--rows", "5"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["matched"] == OLD_DEAD and len(doc["jobs"]) == 5
    assert doc["complete"] is True and doc["scanned"] == OLD_DEAD and doc["bound"] == 100_000
    assert doc["through"] == {"state": "dead", "index": "jobs_dead_idx", "jobs": OLD_DEAD}
    assert doc["summary"] == "all 2,000 dead jobs searched (through index jobs_dead_idx); 2,000 match"
    # an explicit bound below the state's jobs: too many for it, the newest N jobs as before
    assert main(["jobs", "--dsn", buried, "--where", CARD, "--json", "--limit-scan", "1000"]) == 0
    small = json.loads(capsys.readouterr().out)
    assert small["matched"] == 0 and small["complete"] is False and small["scanned"] == 1_000
    assert small["through"] == {"state": "dead", "index": "jobs_dead_idx", "jobs": None}
    assert "more than 1,000 dead jobs: too many for index jobs_dead_idx" in small["summary"]
    # no bound: every job, as before
    assert main(["jobs", "--dsn", buried, "--where", CARD, "--json", "--limit-scan", "0"]) == 0
    every = json.loads(capsys.readouterr().out)
    assert every["matched"] == OLD_DEAD and every["through"] is None and every["bound"] is None


def test_retry_where_retries_all_2000(
    buried: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "audit.jsonl"
    args = ["retry", "--dsn", buried, "--where", CARD, "--yes", "--audit-log", str(log)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "all 2,000 dead jobs searched (through index jobs_dead_idx); 2,000 match" in out
    assert "retried 2000 of 2000 dead jobs" in out
    with psycopg.connect(buried) as conn:
        left = conn.execute("SELECT status, count(*) FROM jobs WHERE id <= %s GROUP BY 1", (OLD_DEAD,))
        assert left.fetchall() == [("pending", OLD_DEAD)]
    end = [json.loads(line) for line in log.read_text().splitlines()][-1]
    assert end["planned"] == OLD_DEAD and end["changed"] == OLD_DEAD


async def test_the_search_panel_finds_all_2000(buried: str, tmp_path: Path) -> None:
    async with dashboard(buried, tmp_path) as (app, pilot):
        screen = await _search(app, pilot, CARD)
        assert screen.result is not None and screen.result.matched == OLD_DEAD
        summary = plain(screen.query_one("#search-summary").content)
        assert "all 2,000 dead jobs searched (through index jobs_dead_idx); 2,000 match" in summary
        assert screen.query_one("#search-rows", DataTable).row_count == 100


# -- the plans: the index is walked, no Seq Scan on the job table ------------------------------------
def _plan_nodes(
    conn: psycopg.Connection, statement: sql.Composable, params: dict[str, Any]
) -> list[dict[str, Any]]:
    """Every node of the statement's plan, run as the search runs it (sequential scans off)."""
    with conn.transaction(force_rollback=True):
        conn.execute("SET LOCAL enable_seqscan = off")
        row = conn.execute(sql.SQL("EXPLAIN (FORMAT JSON) ") + statement, params).fetchone()
    assert row is not None
    doc = row[0] if isinstance(row[0], list) else json.loads(row[0])
    nodes: list[dict[str, Any]] = []

    def walk(node: dict[str, Any]) -> None:
        nodes.append(node)
        for child in node.get("Plans", ()):
            walk(child)

    walk(doc[0]["Plan"])
    return nodes


def assert_walks_the_index(conn: psycopg.Connection, model: QueueModel, where: str) -> set[str]:
    """The served search's statements read the job table only through indexes that lead with the
    state column or hold only the state's rows (never a Seq Scan, never the primary key alone);
    returns the indexes the listing's plan walks."""
    compiled = compile_query(parse(where, datetime.now(timezone.utc)), model)
    assert compiled.served is not None, where
    schema, table = compiled.columns.jobs
    state_indexes = {
        r[0]
        for r in conn.execute(
            "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]"
            " WHERE i.indrelid = %s::regclass"
            " AND (a.attname IN ('state', 'status') OR i.indpred IS NOT NULL)",
            (sql.Identifier(schema, table).as_string(conn),),
        )
    }
    assert compiled.served[1] in state_indexes
    params = {**compiled.params, "w_scan": 100_000, "w_rows": 100, "w_ids": None}
    listed: set[str] = set()
    statements = (rows_statement(compiled, False), ids_statement(compiled, False))
    for statement in (*statements, state_rows_statement(compiled)):
        nodes = _plan_nodes(conn, statement, params)
        assert [n for n in nodes if n.get("Relation Name") == table], statement.as_string(None)
        walked, seq = plan_reads(nodes[0], table)
        assert not seq and walked and set(walked) <= state_indexes, (where, walked)
        listed = listed or set(walked)
    return listed


def test_pgq_dead_search_walks_the_failed_jobs_index(buried: str) -> None:
    model = pgq_model(buried)
    with psycopg.connect(buried, autocommit=True) as conn:
        assert assert_walks_the_index(conn, model, CARD) == {"jobs_dead_idx"}
        assert assert_walks_the_index(conn, model, "state:stuck") == {"jobs_lease_idx"}


STOCK = [pytest.param(c, id=c.id, marks=c.marks) for c in all_cases() if c.id in ("oban-14", "river")]


def _model(dsn: str, case: Any) -> QueueModel:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ANALYZE")
        dialects = (*case.dialects(), *registry.builtin())
        catalog = read_catalog(conn, dialects)
        (match,) = [m for m in detect(catalog, dialects) if m.kind == case.kind]
        return next(d for d in dialects if d.kind == case.kind).model(match, catalog)


@pytest.fixture
def installed(request: pytest.FixtureRequest, server_dsn: str) -> Iterator[tuple[str, Any]]:
    case = request.param
    name = f"pgq_x_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = make_conninfo(server_dsn, dbname=name)
    try:
        case.install(dsn)
        yield dsn, case
    finally:
        with psycopg.connect(server_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.mark.parametrize("installed", STOCK, indirect=True)
def test_framework_state_searches_walk_the_frameworks_own_index(installed: tuple[str, Any]) -> None:
    """River's and Oban's fetching index `(state, queue, ...)` serves every state: a dead search (and
    a done one) reads only that state's rows, and the search says which index."""
    dsn, case = installed
    model = _model(dsn, case)
    assert model.search is not None
    assert {w for w, _ in model.search.indexed_states} == {w for w, _ in model.search.states}
    with psycopg.connect(dsn, autocommit=True) as conn:
        for where in ("state:done args.customer.id:42", "state:stuck"):
            assert_walks_the_index(conn, model, where)
        dead = assert_walks_the_index(conn, model, CARD)
    result = search(dsn, model, parse(CARD, datetime.now(timezone.utc)))
    assert result.through is not None and result.through.jobs == 0 and result.complete
    assert set(result.through.index.split(", ")) == dead  # the summary names what the plan walks
    assert result.summary() == f"all 0 dead jobs searched (through index {result.through.index}); 0 match"


ADVISED = [
    pytest.param(c, id=c.id, marks=c.marks)
    for c in all_cases()
    if c.id in ("procrastinate", "graphile-worker")
]


@pytest.mark.parametrize("installed", ADVISED, indirect=True)
def test_an_advised_dead_index_serves_state_dead(installed: tuple[str, Any]) -> None:
    """procrastinate and Graphile index no dead job: state:dead is the newest N jobs, until the
    operator makes the index pgq-top advises; then every dead job is read through it."""
    dsn, case = installed
    before = _model(dsn, case)
    assert before.search is not None and before.search.indexed_states == ()
    result = search(dsn, before, parse("state:dead", datetime.now(timezone.utc)))
    assert result.through is None and result.summary().startswith("all 0 jobs searched")
    with psycopg.connect(dsn, autocommit=True) as conn:
        for advice in before.advice:
            if "dead" in advice.states:
                for statement in advice.statements:
                    conn.execute(statement)  # type: ignore[arg-type]
    after = _model(dsn, case)
    assert after.search is not None and [w for w, _ in after.search.indexed_states] == ["dead"]
    with psycopg.connect(dsn, autocommit=True) as conn:
        walked = assert_walks_the_index(conn, after, "state:dead")
    assert walked == {after.search.indexed_states[0][1]}
    served = search(dsn, after, parse("state:dead", datetime.now(timezone.utc)))
    assert served.through is not None and served.through.jobs == 0
