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
from pgq_tui.actions.bulk import plan_matching, run_matching, summary
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
    "que",
    "good-job",
    "dbos",
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


# Each kind's own way of recording a failure's text, written on dead jobs the case made (the columns
# the framework writes when a job fails): {jobs} and {id} are the kind's job table and primary key.
ERROR_WRITES = {
    "pgq": "UPDATE {jobs} SET last_error = %(e)s WHERE {id}::text = ANY(%(ids)s)",
    "graphile-worker": "UPDATE {jobs} SET last_error = %(e)s WHERE {id}::text = ANY(%(ids)s)",
    # pg-boss's fail(): output is the error object
    "pg-boss": "UPDATE {jobs} SET output = jsonb_build_object('message', %(e)s::text, 'stack', '')"
    " WHERE {id}::text = ANY(%(ids)s)",
    # River's and Oban's error transitions append {at, attempt, error} to the errors array
    "river": "UPDATE {jobs} SET errors = array_append(errors, jsonb_build_object('at', now(), 'attempt',"
    " attempt, 'error', %(e)s::text)) WHERE {id}::text = ANY(%(ids)s)",
    "oban": "UPDATE {jobs} SET errors = array_append(errors, jsonb_build_object('at', now(), 'attempt',"
    " attempt, 'error', %(e)s::text)) WHERE {id}::text = ANY(%(ids)s)",
    # Que's error transition (Que::Job#handle_error): last_error_message, as good_job's error column
    "que": "UPDATE {jobs} SET last_error_message = %(e)s WHERE {id}::text = ANY(%(ids)s)",
    "good-job": "UPDATE {jobs} SET error = %(e)s WHERE {id}::text = ANY(%(ids)s)",
    # Solid Queue keeps the error on the job's failed execution
    "solid-queue": "UPDATE {failed} SET error = %(e)s WHERE job_id::text = ANY(%(ids)s)",
    # pgqueuer logs a failure as an 'exception' row of its log table, the traceback a TracebackRecord
    # (pgqueuer.domain.models; its queue manager writes it with the job's log entry)
    "pgqueuer": "INSERT INTO {log} (job_id, status, priority, entrypoint, traceback)"
    " SELECT j.id, 'exception', j.priority, j.entrypoint, jsonb_build_object('job_id', j.id, 'timestamp',"
    " now(), 'exception_type', 'RuntimeError', 'exception_message', %(e)s::text, 'traceback',"
    " 'Traceback (most recent call last):', 'additional_context', NULL)"
    " FROM {jobs} j WHERE {id}::text = ANY(%(ids)s)",
}


def test_error_a_state_dead_finds_exactly_a_and_retrying_all_matching_leaves_b(populated, tmp_path) -> None:
    """The acceptance on each kind's stock schema: dead jobs failed with error A and with error B;
    `error:~A state:dead` finds exactly A's, and a bulk retry of all matching (the dashboard's path,
    actions/bulk.py, one job per batch) retries exactly those; B's stay dead."""
    case, dsn, conn, model = populated
    write = ERROR_WRITES.get(case.kind)
    if write is None or model.action(ActionKind.RETRY) is None:
        pytest.skip(f"{case.kind}: no error text or no retry")
    now = datetime.now(timezone.utc)
    dead = [str(i) for i in search(dsn, model, parse("state:dead", now), limit_scan=None, all_ids=True).ids]
    if not dead:
        pytest.skip(f"{case.id} populates no dead job")
    # half with A, half with B (a case with one dead job has only A: its B list is empty)
    a_ids, b_ids = dead[: len(dead) // 2 + len(dead) % 2], dead[len(dead) // 2 + len(dead) % 2 :]
    cols = model.search
    assert cols is not None
    schema = cols.jobs[0]
    statement = sql.SQL(write).format(
        jobs=sql.Identifier(*cols.jobs),
        id=sql.Identifier(cols.id),
        failed=sql.Identifier(schema, "solid_queue_failed_executions"),
        log=sql.Identifier(schema, "pgqueuer_log"),
    )
    conn.execute(statement, {"e": "PaymentsAPI: connection refused (A)", "ids": a_ids})
    if b_ids:
        conn.execute(statement, {"e": "CardError: invalid card (B)", "ids": b_ids})
    query = parse('error:~"Connection Refused" state:dead', now)
    found = search(dsn, model, query, limit_scan=None, all_ids=True)
    assert sorted(map(str, found.ids)) == sorted(a_ids)
    with Actions(dsn, model, audit=AuditLog(tmp_path / "a.jsonl"), batch=1) as actions:
        matching = plan_matching(actions, ActionKind.RETRY, query, limit_scan=None)
        assert matching.plan.refused is None and matching.plan.count == len(a_ids), matching.plan.refused
        outcome = run_matching(actions, matching)
    assert outcome.error is None and outcome.changed == len(a_ids)
    noun = "matching job" if len(a_ids) == 1 else "matching jobs"
    assert summary(matching, outcome) == f"retried {len(a_ids)} of {len(a_ids)} {noun}"
    assert search(dsn, model, query, limit_scan=None).matched == 0
    still = search(dsn, model, parse('error:~"invalid card" state:dead', now), limit_scan=None, all_ids=True)
    assert sorted(map(str, still.ids)) == sorted(b_ids)
