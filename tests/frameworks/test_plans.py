"""Every read a framework dialect marks as indexed walks an index: O(active jobs), never O(table).

The schema is installed with the framework's own tool. With sequential scans disabled, the planner
still picks one only when no index can serve the query, so a Seq Scan left on a job table (or a
partition of it, or the events/log table) means the statement scans. Checked twice: on the
framework's own indexes (a statement marked indexed must be served by them; the others are marked as
scans, which the engine runs in the poll only for small tables, and the index that would serve them is
advice), and after the operator followed that advice (then every statement is indexed). Action
statements, given ids, reach their rows through the primary key.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from pgq_tui.dialects import registry
from pgq_tui.dialects.contract import QueueModel, Statement
from pgq_tui.dialects.detect import detect
from pgq_tui.dialects.introspect import read_catalog

from .cases import follow_index_advice
from .dbos_client import Dbos
from .good_job_client import GoodJobSchema
from .graphile_client import Graphile, Graphile18
from .harness import create_runs_table
from .pgboss_client import PgBoss, PgBoss11, PgBoss12, PgBoss1212
from .pgqueuer_client import Pgqueuer
from .procrastinate_client import Procrastinate
from .que_schema import QueSchema
from .river_client import River

UUID = "00000000-0000-0000-0000-000000000000"
FRAMEWORKS = [
    pytest.param(Graphile, "graphile-worker", 1, id="graphile-worker"),
    pytest.param(Graphile18, "graphile-worker", 1, id="graphile-worker-18"),
    pytest.param(PgBoss, "pg-boss", UUID, id="pg-boss"),
    pytest.param(PgBoss11, "pg-boss", UUID, id="pg-boss-11"),
    pytest.param(PgBoss1212, "pg-boss", UUID, id="pg-boss-12.12"),
    pytest.param(PgBoss12, "pg-boss", UUID, id="pg-boss-12"),
    pytest.param(Procrastinate, "procrastinate", 1, id="procrastinate"),
    pytest.param(Pgqueuer, "pgqueuer", 1, id="pgqueuer"),
    pytest.param(River, "river", 1, id="river"),
    pytest.param(Dbos, "dbos", "a-workflow-id", id="dbos"),
    pytest.param(GoodJobSchema, "good-job", UUID, id="good-job"),
    pytest.param(QueSchema, "que", 1, id="que"),
]
# Relations that grow with the job count (a seq scan on a queue or task list is fine: a row per queue).
BIG = (
    "_private_jobs",
    "job",
    "job_common",
    "procrastinate_jobs",
    "procrastinate_events",
    "pgqueuer",
    "pgqueuer_log",
    "river_job",
    "workflow_status",
    "workflow_input",
    "workflow_output",
    "good_jobs",
    "que_jobs",
)


def model_of(conn: psycopg.Connection, kind: str) -> QueueModel:
    dialects = registry.builtin()
    catalog = read_catalog(conn, dialects)
    (match,) = [m for m in detect(catalog, dialects) if m.kind == kind]
    return next(d for d in dialects if d.kind == kind).model(match, catalog)


def seq_scans(conn: psycopg.Connection, statement: Statement, params: dict[str, Any]) -> list[str]:
    """Relations the plan reads with a Seq Scan, with sequential scans disabled."""
    with conn.transaction(force_rollback=True):
        conn.execute("SET LOCAL enable_seqscan = off")
        plan = conn.execute(
            psycopg.sql.SQL("EXPLAIN (FORMAT JSON) ") + statement.compose(), params
        ).fetchone()
    assert plan is not None
    found: list[str] = []

    def walk(node: dict[str, Any]) -> None:
        if node.get("Node Type") == "Seq Scan":
            found.append(str(node.get("Relation Name")))
        for child in node.get("Plans", ()):
            walk(child)

    walk((plan[0] if isinstance(plan[0], list) else json.loads(plan[0]))[0]["Plan"])
    return found


def big(relation: str) -> bool:
    # pg-boss 10 keeps one partition per queue, named j + sha224 hex
    return relation in BIG or (len(relation) == 57 and relation.startswith("j"))


@pytest.fixture
def installed(request: pytest.FixtureRequest, empty_dsn: str) -> Iterator[tuple[Any, str, Any]]:
    driver, kind, sample_id = request.param
    driver.version()
    create_runs_table(empty_dsn)
    driver(empty_dsn).install()
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute("ANALYZE")
        yield conn, kind, sample_id


def reads(model: QueueModel) -> list[Statement]:
    """The poll's reads: counts, lists, the job detail and the Passes the poll runs (indexed ones)."""
    passes = [p.statement for p in model.passes if p.statement.indexed]
    return [s for s in (*model.counts, model.leases, model.dead, model.job, *passes) if s is not None]


@pytest.mark.parametrize(
    "installed", [p.values for p in FRAMEWORKS], indirect=True, ids=[p.id for p in FRAMEWORKS]
)
def test_every_poll_walks_an_index_before_and_after_the_advice(installed, empty_dsn: str) -> None:
    conn, kind, sample_id = installed
    params = {"cap1": 10, "rows": 50, "id": sample_id, "ids": [sample_id], "queue": None, "batch": 100}
    before = model_of(conn, kind)
    polled = len([p for p in before.passes if p.statement.indexed])
    assert len(reads(before)) == 1 + len(before.counts) + 2 + polled  # every list supplied, index or not
    for statement in reads(before):
        if statement.indexed:
            assert [r for r in seq_scans(conn, statement, params) if big(r)] == [], statement.name
    follow_index_advice(empty_dsn, kind)
    conn.execute("ANALYZE")
    after = model_of(conn, kind)
    # following the advice turns its scans into index walks (procrastinate's kept succeeded jobs
    # are counted by a scan whatever the indexes: their count grows with the table)
    assert after.advice == ()
    # (and Que's finished and expired jobs: no index of Que's serves them, and pgq-top advises none;
    # and pg-boss 11 and 12's completed jobs: job_i16 also holds failed and cancelled ones, #35)
    kept = {
        "pgboss.count_completed_scan",
        "procrastinate.count_done_scan",
        "dbos.count_done_scan",
        "que.count_final_scan",
        "que.dead_scan",
    }
    assert {s.name for s in after.scans} <= kept
    # an advice makes a scanned figure indexed, unless it names no state: it only makes an indexed
    # count cheaper (good_job's and Que's waiting indexes: counted without reading each row)
    assert len({s.name for s in before.scans}) > len(after.scans) or all(not a.states for a in before.advice)
    for statement in reads(after):
        if statement.indexed:
            assert [r for r in seq_scans(conn, statement, params) if big(r)] == [], statement.name
    # the check sees a scan where there is one: the locked-jobs count without its index
    if kind == "graphile-worker":
        conn.execute("DROP INDEX graphile_worker.pgq_top_locked_jobs")
        (locked,) = [s for s in after.counts if s.name == "graphile.count_locked"]
        assert "_private_jobs" in seq_scans(conn, locked, params)
        conn.execute(next(a.definition for a in before.advice if "locked" in a.definition))
    for action in after.actions:
        for statement in (action.preview, action.statement):
            assert [r for r in seq_scans(conn, statement, params) if big(r)] == [], statement.name
