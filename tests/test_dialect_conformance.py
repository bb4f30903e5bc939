"""The dialect contract, checked over every dialect (cases in tests/dialect_cases/).

For each case: install the framework's schema with its own tool, put jobs in every state, then check
that detection finds exactly that queue, that every statement returns the columns it declares, that
the counts (exact and capped) equal ground-truth SQL, that the stuck rule flags exactly the stuck
jobs, that the job detail agrees, and that every action refuses rows outside its guard and changes
exactly the rows its preview promised.
"""

from __future__ import annotations

import ast
import sys
import time
import uuid
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import psycopg
import pytest
from dialect_cases import DialectCase, TruthJob, all_cases
from dialect_support import run
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import dict_row

from pgq_tui.dialects import registry
from pgq_tui.dialects.contract import (
    ACTIVITY_COLUMNS,
    CACHED_KEYS,
    CANONICAL_STATES,
    COUNT_KEY,
    FINISHED_COLUMNS,
    OLDEST_READY,
    PAUSE_PREVIEW_COLUMNS,
    PAUSED_COLUMNS,
    PREVIEW_COLUMNS,
    PREVIEW_OPTIONAL,
    ActionKind,
    Capability,
    Dialect,
    QueueModel,
    State,
    lease_row,
)
from pgq_tui.dialects.detect import detect
from pgq_tui.dialects.introspect import DEFAULTS, read_catalog
from pgq_tui.monitor.collect import Monitor
from pgq_tui.monitor.probe import EXPLAIN, check_probe_text, run_probe
from pgq_tui.schedules.model import SCHEDULE_COLUMNS, SCHEDULE_JOB_COLUMNS

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from delay_proxy import DelayProxy

CASES = [pytest.param(c, id=c.id, marks=c.marks) for c in all_cases()]


def _dialects(case: DialectCase) -> tuple[Dialect, ...]:
    return (*case.dialects(), *registry.builtin())


def _model(conn: psycopg.Connection, case: DialectCase) -> QueueModel:
    dialects = _dialects(case)
    matches = [m for m in detect(read_catalog(conn, dialects), dialects) if m.kind == case.kind]
    assert [(m.schema, m.table) for m in matches] == [(case.schema, case.table)]
    dialect = next(d for d in dialects if d.kind == case.kind)
    return dialect.model(matches[0], read_catalog(conn, dialects))


def _counts(
    conn: psycopg.Connection, model: QueueModel, cap1: int | None, *, indexed: bool | None = None
) -> Counter[tuple[str, str]]:
    """Every count statement's rows summed (`indexed`: only those an index serves, or only scans)."""
    out: Counter[tuple[str, str]] = Counter()
    for statement in model.counts:
        if indexed is not None and statement.indexed != indexed:
            continue
        for row in run(conn, statement, cap1=cap1):
            for key, value in row.items():
                if key not in (COUNT_KEY, OLDEST_READY) and value is not None:
                    out[(row[COUNT_KEY], key)] += int(value)
    return out


@pytest.fixture(scope="module", params=CASES)
def populated(request: pytest.FixtureRequest, server_dsn: str):
    """One populated database per case, shared by that case's tests (pytest runs them one after the
    other): populating runs the framework for real (tens of seconds for the Node ones), and every
    test here only reads, or writes inside a transaction it rolls back. The ground truth is read
    again by each test, so a lease that expires meanwhile moves in the truth and the view alike."""
    case: DialectCase = request.param
    name = f"pgq_c_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = make_conninfo(server_dsn, dbname=name)
    try:
        case.install(dsn)
        case.populate(dsn)
        time.sleep(0.05)  # let the shortest leases of the populate step expire
        with psycopg.connect(dsn, autocommit=True) as conn:
            yield case, conn, _model(conn, case)
    finally:
        with psycopg.connect(server_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def test_every_dialect_satisfies_the_protocol() -> None:
    kinds = [d.kind for d in registry.builtin()]
    assert len(kinds) == len(set(kinds))
    for d in registry.builtin():
        assert isinstance(d, Dialect)
        assert d.title and d.versions


def test_statements_return_the_columns_they_declare(populated) -> None:
    case, conn, model = populated
    allowed = {COUNT_KEY, OLDEST_READY, *CANONICAL_STATES, *model.extra_states}
    assert model.stuck_rule
    for statement in model.counts:
        assert COUNT_KEY in statement.columns and set(statement.columns) <= allowed, statement.name
    if model.activity is not None:
        assert model.activity.columns == ACTIVITY_COLUMNS
    if model.finished is not None:  # timestamps' rates: queue, then the rates it counts
        assert model.finished.columns[0] == "queue" and set(model.finished.columns) <= set(FINISHED_COLUMNS)
    schedules = model.schedules
    if schedules is not None:  # the schedule rows' and their jobs' canonical shapes (docs/schedules.md)
        assert schedules.statement.columns == SCHEDULE_COLUMNS
        assert schedules.jobs is None or schedules.jobs.columns == SCHEDULE_JOB_COLUMNS
    scheduled = (schedules.statement, schedules.jobs, schedules.scheduler) if schedules else ()
    cached = model.cached
    if cached is not None:  # the framework's own counts: queue, as_of, then count names it keeps
        assert cached.kept_by and cached.statement.columns[:2] == CACHED_KEYS
        assert set(cached.statement.columns[2:]) <= allowed - {COUNT_KEY, OLDEST_READY}
    listed = [
        s
        for s in (
            *model.counts,
            model.leases,
            model.dead,
            model.job,
            model.attempts,
            model.latency,
            model.activity,
            model.finished,
            *scheduled,
            cached.statement if cached is not None else None,
        )
        if s is not None
    ]
    window = {"since": datetime(2000, 1, 1, tzinfo=timezone.utc), "until": datetime.now(timezone.utc)}
    for statement in listed:
        with conn.cursor() as cur:
            params = {"cap1": None, "rows": 50, "id": _any_id(conn, case), "shown": 50, "newest": 1000}
            params.update(_activity(after=0))
            params.update(window)
            params["names"] = []  # a schedule statement's
            cur.execute(statement.compose(), params)
            got = tuple(d.name for d in cur.description or ())
        assert got == statement.columns, statement.name
    for action in model.actions:
        assert action.guard and action.effect and action.label
        with conn.transaction(force_rollback=True):
            previewed = _describe(conn, action.preview)
            assert tuple(previewed[:2]) == PREVIEW_COLUMNS, action.preview.name
            assert set(previewed[2:]) <= set(PREVIEW_OPTIONAL), action.preview.name
            assert tuple(previewed) == action.preview.columns, action.preview.name
            assert _describe(conn, action.statement)[0] == "id", action.statement.name
    _pause_statements_declare_their_columns(conn, model)


def _pause_statements_declare_their_columns(conn: psycopg.Connection, model: QueueModel) -> None:
    """The framework's own pause (QueueModel.pause), or one line saying it has none."""
    spec = model.pause
    if spec is None:
        assert "pause" in str(model.support(Capability.PAUSE).reason)
        return
    assert spec.label and spec.pause_effect and spec.resume_effect and spec.reaction
    assert (spec.state is None) == (spec.unknown_why is not None) and (spec.durable or spec.caveat)
    with conn.transaction(force_rollback=True):
        if spec.state is not None:
            assert tuple(_describe(conn, spec.state)) == PAUSED_COLUMNS == spec.state.columns
        preview = {**DEFAULTS, "queue": "conformance"}
        with conn.cursor() as cur:
            cur.execute(spec.preview.compose(), preview)
            assert tuple(d.name for d in cur.description or ()) == PAUSE_PREVIEW_COLUMNS
            for statement in (spec.pause, spec.resume):
                cur.execute(statement.compose(), preview)
                assert tuple(d.name for d in cur.description or ()) == ("queue",) == statement.columns


def _activity(after: int | None) -> dict[str, object]:
    """The activity statement's parameters, as the monitor passes them (monitor/rates.py)."""
    return {"after": after, "max_span": 200_000, "gap_rows": 1000, "lo": [], "hi": []}


def test_activity_counts_the_new_jobs_per_queue_through_the_primary_key(populated) -> None:
    """QueueModel.activity (per-queue rates for any writer): the first poll learns the max id; the
    next counts, per queue (the counts' queue key), exactly the rows with higher ids, reading the
    primary key's range of new ids, never the table."""
    case, conn, model = populated
    if model.activity is None:
        pytest.skip(str(model.support(Capability.RATES).reason))
    jobs = case.truth(conn)
    if not all(isinstance(j.id, int) for j in jobs):  # pgmq: `<queue>:<msg_id>`, per-queue sequences
        pytest.skip("ids are not one integer key: the dialect's own rates test covers its activity")
    ids = sorted(int(j.id) for j in jobs)
    (top,) = [r["n"] for r in run(conn, model.activity, **_activity(None)) if r["kind"] == "top"]
    assert top >= ids[-1]
    cut = ids[len(ids) // 2]
    rows = run(conn, model.activity, **_activity(cut))
    got = Counter({r["queue"]: r["n"] for r in rows if r["kind"] == "new"})
    assert got == Counter(str(j.queue) for j in jobs if int(j.id) > cut)
    with conn.transaction(force_rollback=True):
        conn.execute("SET LOCAL enable_seqscan = off")
        conn.execute("SET LOCAL enable_bitmapscan = off")  # as the monitor's session (monitor/collect.py)
        (doc,) = conn.execute(
            psycopg.sql.SQL("EXPLAIN (FORMAT JSON) ") + model.activity.compose(), _activity(cut)
        ).fetchone()
    scans = [n for n in _plan_nodes(doc[0]["Plan"]) if n.get("Relation Name") == case.table]
    assert scans and all(n["Node Type"] in ("Index Scan", "Index Only Scan") for n in scans), scans


def test_a_poll_is_one_round_trip(populated) -> None:
    """The one Monitor runs any dialect's statements with the server-wide panels in one pipeline,
    with the server row and the relation check (planned on the last poll's clock and table; the
    first poll sends them after). Counted by a proxy on the link."""
    case, conn, model = populated
    proxy = DelayProxy({k: str(v) for k, v in conninfo_to_dict(conn.info.dsn).items()})
    via = make_conninfo(conn.info.dsn, host="127.0.0.1", port=str(proxy.port), password=conn.info.password)
    # a cap above every count (no background count on the link) and no claim-cost probe
    with Monitor(via, model, count_cap=100_000, probe_interval_s=0) as monitor:
        monitor.collect()  # connects and prepares
        poll = monitor._connection()  # the poll's own session: the background readers have theirs
        clean, missed = 0, 0
        for _ in range(8):
            before = proxy.trips_of(poll)
            snap = monitor.collect()
            trips = proxy.trips_of(poll) - before
            if snap.errors:
                # a panel that failed (its lock_timeout: autovacuum truncating a churned table holds
                # an exclusive lock) costs the statements after it one more round trip, sent again
                assert trips <= 2 + len(snap.errors), (case.id, trips, snap.errors)
                continue
            # a window's second guessed wrong (a poll within a few ms of a second's end) costs one more
            missed += trips == 2
            assert trips <= 2 and missed <= 1 and snap.queues, (case.id, trips)
            clean += 1
            if clean == 3:
                break
        assert clean == 3, f"{case.id}: fewer than 3 polls without a failed panel in 8"


def _describe(conn: psycopg.Connection, statement) -> list[str]:
    with conn.cursor() as cur:
        cur.execute(statement.compose(), {**DEFAULTS, "batch": 1})
        return [d.name for d in cur.description or ()]


def _any_id(conn: psycopg.Connection, case: DialectCase):
    jobs = case.truth(conn)
    return jobs[0].id if jobs else 0


def test_counts_equal_ground_truth_exact_and_capped(populated) -> None:
    case, conn, model = populated
    truth = Counter((j.queue, j.state) for j in case.truth(conn))
    served = set(model.count_columns()) - {COUNT_KEY, OLDEST_READY}
    # every state is counted, index or not (an advised index is an optimization, never the price)
    assert {s for _, s in truth} <= served | {"done"}, "a state the dialect cannot count"
    advised = {s for a in model.advice for s in a.states}
    scanned = {c for s in model.counts if not s.indexed for c in s.columns} - {COUNT_KEY, OLDEST_READY}
    assert advised <= scanned, "an advised state must still be counted, by a scan"
    exact = _counts(conn, model, None)
    assert {k: v for k, v in exact.items() if v} == {k: v for k, v in truth.items() if k[1] in served}
    cap1 = 2
    # a scan reads every row of its states anyway: exact whatever the cap
    by_scan = _counts(conn, model, cap1, indexed=False)
    assert {k: v for k, v in by_scan.items() if v} == {k: v for k, v in truth.items() if k[1] in scanned}
    capped = _counts(conn, model, cap1, indexed=True)
    served -= scanned
    per_queue = {k: v for k, v in capped.items() if v and k[1] not in model.capped_overall}
    assert per_queue == {
        k: min(v, cap1) for k, v in truth.items() if k[1] in served and k[1] not in model.capped_overall
    }
    for state in set(model.capped_overall) & served:
        got = {q: n for (q, s), n in capped.items() if s == state and n}
        want = {q: n for (q, s), n in truth.items() if s == state}
        if sum(got.values()) < cap1:
            assert got == want
        else:
            assert sum(got.values()) == min(cap1, sum(want.values()))
            assert all(n <= want.get(q, 0) for q, n in got.items())


def _id_order(job: TruthJob) -> tuple[int, Any]:
    """Jobs in id order (integer ids numerically; others, e.g. uuids or pgmq's `<queue>:<id>`, as text)."""
    return (0, job.id) if isinstance(job.id, int) else (1, str(job.id))


def test_oldest_ready_is_the_oldest_ready_job(populated) -> None:
    """Each queue's ready jobs are given different ready-since times (the case's `backdate`, in a
    rolled-back transaction whose now() the statements share), the oldest a distinct age per queue:
    every statement that reads the age must give exactly that oldest, not another ready job's."""
    case, conn, model = populated
    if not model.support(Capability.OLDEST_READY).ok:
        pytest.skip(str(model.support(Capability.OLDEST_READY).reason))
    assert case.backdate is not None, "the case must say how a ready job's ready-since time is set"
    ready: dict[str, list[TruthJob]] = {}
    for j in case.truth(conn):
        if j.state == State.READY.value:
            ready.setdefault(str(j.queue), []).append(j)
    assert any(len(jobs) > 1 for jobs in ready.values()), "no queue has two ready jobs to tell apart"
    want: dict[str, float] = {}
    with conn.transaction(force_rollback=True):
        for i, (queue, jobs) in enumerate(sorted(ready.items())):
            jobs.sort(key=_id_order)
            # the oldest is the last id (or, where the dialect reads in id order, the first); the
            # other end is dated too, younger, so the truth has different times and one true oldest
            oldest, other = (jobs[0], jobs[-1]) if case.ready_in_id_order else (jobs[-1], jobs[0])
            want[queue] = 7200.0 + 600.0 * i  # hours older than anything the populate made
            if other != oldest:
                case.backdate(conn, other, want[queue] - 300.0)
            case.backdate(conn, oldest, want[queue])
        seen: dict[str, float] = {}
        for s in model.counts:
            if OLDEST_READY not in s.columns:
                continue
            for r in run(conn, s, cap1=None):
                if r[OLDEST_READY] is not None:
                    queue = str(r[COUNT_KEY])
                    seen[queue] = max(seen.get(queue, 0.0), float(r[OLDEST_READY]))
    assert seen.keys() == want.keys()
    for queue, age in want.items():
        assert seen[queue] == pytest.approx(age, abs=0.5), (queue, seen[queue], age)


def test_stuck_rule_flags_exactly_the_stuck_jobs(populated) -> None:
    case, conn, model = populated
    if model.leases is None:
        pytest.skip(str(model.support(Capability.LEASES).reason))
    jobs = case.truth(conn)
    rows = [lease_row(r) for r in run(conn, model.leases, rows=1000)]
    assert {r.id for r in rows if r.stuck} == {j.id for j in jobs if j.state == State.STUCK.value}
    assert {r.id for r in rows if not r.stuck} == {j.id for j in jobs if j.state == State.RUNNING.value}
    if not model.liveness_known:
        assert {r.liveness.value for r in rows} <= {"unknown"}


def test_the_running_and_the_stuck_list_are_each_capped_on_their_own(populated) -> None:
    """`rows` caps each list, not the two together (docs/snapshot.md): a crash that leaves more
    stuck jobs than the cap must not empty the running list ("Leases (0 of 796)" while 796 jobs
    run). With one row each: the most urgent stuck job and the running job with least time left,
    from the lease statement and from the poll (its Pass, where one covers the list)."""
    case, conn, model = populated
    if model.leases is None:
        pytest.skip(str(model.support(Capability.LEASES).reason))
    jobs = case.truth(conn)
    stuck = {j.id for j in jobs if j.state == State.STUCK.value}
    running = {j.id for j in jobs if j.state == State.RUNNING.value}
    rows = [lease_row(r) for r in run(conn, model.leases, rows=1)]
    assert sorted(r.stuck for r in rows) == sorted(
        flag for flag, ids in ((True, stuck), (False, running)) if ids
    )
    assert {r.id for r in rows} <= stuck | running
    dsn = make_conninfo(conn.info.dsn, password=conn.info.password)
    with Monitor(dsn, model, read_only=True, lease_rows=1) as monitor:
        snap = monitor.collect()
    assert (len(snap.stuck.rows), len(snap.leases.rows)) == (min(1, len(stuck)), min(1, len(running)))
    assert {r.id for r in snap.stuck.rows} <= stuck and {r.id for r in snap.leases.rows} <= running


def test_dead_list_and_job_detail_agree_with_truth(populated) -> None:
    case, conn, model = populated
    jobs = case.truth(conn)
    if model.dead is not None:
        dead = run(conn, model.dead, rows=1000)
        assert {r["id"] for r in dead} == {j.id for j in jobs if j.state == State.DEAD.value}
    if model.job is not None:
        for j in jobs:
            (row,) = run(conn, model.job, id=j.id)
            assert (row["id"], row["queue"], row["state"]) == (j.id, j.queue, j.state)
    if model.attempts is not None:  # each job's history: newest first, at most `shown` rows
        for j in jobs:
            attempts = run(conn, model.attempts, id=j.id, shown=2)
            assert len(attempts) <= 2
            numbers = [a["attempt"] for a in attempts if a["attempt"] is not None]
            assert numbers == sorted(numbers, reverse=True), model.attempts.name


def test_actions_touch_only_what_their_guard_admits(populated) -> None:
    case, conn, model = populated
    for action in model.actions:
        jobs: list[TruthJob] = case.truth(conn)
        inside = [j.id for j in jobs if j.state in action.takes]
        outside = [j.id for j in jobs if j.state not in action.takes]
        with conn.transaction(force_rollback=True):
            if outside and action.kind != ActionKind.REAP:  # a reap pass takes every stuck job
                (p,) = run(conn, action.preview, ids=outside)
                assert p["eligible"] == 0, action.kind
                assert run(conn, action.statement, ids=outside, batch=1000) == [], action.kind
            (p,) = run(conn, action.preview, ids=None)  # every job the guard admits, unless named
            unnamed = [j for j in jobs if j.id in inside and j.state not in action.chosen_only]
            assert p["eligible"] == len(unnamed), action.kind
            changed = run(conn, action.statement, ids=inside or None, batch=1000)
            assert sorted(r["id"] for r in changed) == sorted(inside), action.kind
            after = {j.id: j.state for j in case.truth(conn)}
            assert all(after.get(i) not in action.takes for i in inside), action.kind


def test_action_kinds_are_known() -> None:
    assert {a.value for a in ActionKind} >= {"requeue", "retry", "discard"}


DIALECTS = Path(__file__).resolve().parent.parent / "pgq_tui" / "dialects"
FORBIDDEN = ("pgq_tui.monitor", "pgq_tui.actions", "pgq_tui.tui", "pgq_tui.db", "textual")


def test_dialects_never_import_the_engine_or_the_tui() -> None:
    """Dialects answer questions: no connections (psycopg.connect), no monitor, actions or TUI."""
    offenders = []
    for path in DIALECTS.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.startswith(FORBIDDEN)]
            if isinstance(node, ast.Attribute) and node.attr == "connect":
                offenders.append(f"{path.name}: .connect")
    assert offenders == []


def _plan_nodes(plan: dict) -> list[dict]:
    return [plan, *(n for child in plan.get("Plans", ()) for n in _plan_nodes(child))]


def _job_tables(conn: psycopg.Connection, model: QueueModel) -> set[str]:
    """The queue's own tables and their partitions (pg-boss): the ones that grow with the jobs."""
    names: set[str] = set()
    for schema, table in model.relations:
        rows = conn.execute(
            "SELECT c.relname FROM pg_partition_tree(%s::regclass) p JOIN pg_class c ON c.oid = p.relid",
            (sql.Identifier(schema, table).as_string(conn),),
        ).fetchall()
        names |= {r[0] for r in rows}
    return names


def test_claim_probe_finds_a_ready_job_through_an_index(populated) -> None:
    """The claim-cost probe (monitor/probe.py) is the framework's own claim scan: a plain SELECT that
    every dialect supplies, and that, for every queue with ready jobs, finds one walking an index,
    never the table; and it runs as the monitor runs it (READ ONLY, its own statement timeout)."""
    case, conn, model = populated
    assert model.claim_probe is not None, f"{model.title} supplies no claim probe"
    check_probe_text(model.claim_probe.shown())
    ready = {j.queue for j in case.truth(conn) if j.state == State.READY.value}
    assert ready, "the case has ready jobs"
    for queue in ready:
        with conn.transaction(force_rollback=True):
            conn.execute("SET LOCAL enable_seqscan = off")
            (doc,) = conn.execute(EXPLAIN + model.claim_probe.compose(), {"queue": queue}).fetchone()
        plan = doc[0]["Plan"]
        nodes = _plan_nodes(plan)
        assert plan["Actual Rows"] == 1, (queue, plan)
        # never a scan of the queue's own tables (a lookup in a small one, e.g. Graphile's named
        # queues, may be a scan: it has an index only on what the claim does not ask)
        scanned = {n["Relation Name"] for n in nodes if n["Node Type"] == "Seq Scan"}
        assert not scanned & _job_tables(conn, model), (queue, plan)
        assert [n["Index Name"] for n in nodes if "Index Name" in n], (queue, plan)
        point = run_probe(
            conn, model.claim_probe.compose(), {"queue": queue}, at=datetime.now(timezone.utc), dead_tuples=0
        )
        assert point.found and point.buffers > 0, (queue, point)


def test_the_background_counts_in_one_statement_equal_each_statement_alone(populated) -> None:
    """The background counter runs every indexed count statement and the activity statement as ONE
    statement (one snapshot, the xmin horizon held for that statement only): same counts as each
    statement run alone, and the same new ids."""
    from pgq_tui.monitor.background import ACTIVITY, COUNTS, one_statement, parse

    _case, conn, model = populated
    indexed = tuple(s for s in model.counts if s.indexed)
    params = {**DEFAULTS, "cap1": None, **_activity(after=0), "max_span": 1 << 62, "gap_rows": 0}
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(one_statement(indexed, model.activity), params).fetchall()
    now = datetime.now(timezone.utc)
    counted = parse([r["row"] for r in rows if r["part"] == COUNTS], frozenset(), now, 0.0)
    alone = _counts(conn, model, None, indexed=True)
    want = {(str(q), n): v for (q, n), v in alone.items() if v}
    assert {k: v for k, v in counted.counts.items() if v} == want
    if model.activity is not None:
        seen = [r["row"] for r in rows if r["part"] == ACTIVITY]
        with conn.cursor(row_factory=dict_row) as cur:
            got = cur.execute(model.activity.compose(), params).fetchall()
        assert sorted(repr(sorted(r.items())) for r in seen) == sorted(repr(sorted(r.items())) for r in got)
