"""Issue 34's acceptance for DBOS Transact, with its real client (dbos 3.4.0, tests/frameworks/
dbos_client.py): DBOS's own migrations build the stock `dbos` schema (no index added); its DBOSClient
enqueues; its executors run, crash under kill -9 and recover (DBOS's own recovery dead-letters the
doomed workflows). Then: 3 queues, 50 ENQUEUED, 5 PENDING on a killed executor, 3
MAX_RECOVERY_ATTEMPTS_EXCEEDED, and every count pgq-top shows (snapshot, check, exporter) equals the
ground truth of a plain scan; the 5 are stuck by the stated rule; `why` names it; cancel is refused for
finished workflows and under --read-only; resume makes a fresh executor finish exactly those 5.

One populated database for the module (populating takes DBOS launches and crashes): the tests that
only read come first, the one that acts last.
"""

from __future__ import annotations

import json
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import psycopg
import pytest
from dialect_support import cli
from psycopg import sql
from psycopg.conninfo import make_conninfo

from pgq_tui.detection import single_queue
from pgq_tui.errors import EXIT_OK, EXIT_REFUSED
from pgq_tui.exitcodes import WHY_CRITICAL, WHY_WARNING
from pgq_tui.search.query import parse
from pgq_tui.search.run import search

from .dbos_client import DEAD, ENQUEUED, PENDING_KILLED, Dbos, populate
from .harness import Processes, create_runs_table, runs, wait_for

FIELDS = ("ready", "scheduled", "running", "stuck", "dead", "done")
EXTRAS = ("failed", "cancelled")


@pytest.fixture(scope="module")
def dbos_world(server_dsn: str) -> Iterator[tuple[Dbos, dict[str, list[str]], Processes]]:
    Dbos.version()  # skips, or fails under PGQ_REQUIRE_FRAMEWORKS=1, when dbos is not installed
    name = f"pgq_dbos_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = make_conninfo(server_dsn, dbname=name)
    procs = Processes.under(Path(tempfile.mkdtemp(prefix="pgq-dbos-")))
    try:
        create_runs_table(dsn)
        fw = Dbos(dsn)
        fw.install()
        ids = populate(fw, procs)
        yield fw, ids, procs
    finally:
        procs.stop_all()
        with psycopg.connect(server_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def truth(fw: Dbos) -> Counter[tuple[str, str]]:
    return Counter((queue, state) for _, queue, state in fw.truth())


def shown(snap: dict[str, Any]) -> Counter[tuple[str, str]]:
    got: Counter[tuple[str, str]] = Counter()
    for q in snap["queues"]:
        for name in FIELDS:
            if q[name]:
                got[(q["queue"], name)] = q[name]
        for name in EXTRAS:
            if q["extra"].get(name):
                got[(q["queue"], name)] = q["extra"][name]
    return got


def test_the_scenario_is_what_the_issue_asks(dbos_world) -> None:
    """The ground truth itself (plain SQL): 3 queues, 50 ready, 5 stuck on gamma, 3 dead (DBOS clears
    queue_name when it dead-letters), the finished ones on alpha."""
    fw, ids, _ = dbos_world
    want = truth(fw)
    assert {q for q, _ in want} == {"alpha", "beta", "gamma", "(no queue)"}
    assert {q: want[(q, "ready")] for q in ENQUEUED} == ENQUEUED
    assert want[("gamma", "stuck")] == PENDING_KILLED and want[("(no queue)", "dead")] == DEAD
    assert (want[("alpha", "done")], want[("alpha", "failed")]) == (4, 2)
    assert sum(want.values()) == 50 + 5 + 3 + 4 + 2
    with psycopg.connect(fw.dsn) as conn:
        (version,) = conn.execute("SELECT version FROM dbos.dbos_migrations").fetchone()
        attempts = conn.execute(
            "SELECT recovery_attempts FROM dbos.workflow_status WHERE workflow_uuid = ANY(%s)",
            (ids["doomed"],),
        ).fetchall()
    assert version == 125 and {a for (a,) in attempts} == {3}  # claimed, recovered, dead-lettered


def test_snapshot_counts_equal_ground_truth_on_the_stock_schema(dbos_world, capsys) -> None:
    fw, ids, _ = dbos_world
    code, out, err = cli(capsys, "snapshot", "--json", "--dsn", fw.dsn)  # detected, no --kind
    assert (code, err) == (EXIT_OK, ""), err
    snap = json.loads(out)
    assert snap["kind"] == "dbos" and "migration 125" in snap["target"], (snap["kind"], snap["target"])
    assert shown(snap) == truth(fw)
    for q in snap["queues"]:
        for name, figure in q["figures"].items():
            assert figure["accuracy"] in ("exact", "stale", "unsupported") and figure["as_of"], (name, figure)
    assert "pgq-top's rule" in snap["stuck_rule"] and "heartbeat" in snap["stuck_rule"]
    stuck = {r["id"]: r for r in snap["stuck"]["rows"]}
    assert set(stuck) == set(ids["held"])
    assert {r["liveness"] for r in stuck.values()} == {"gone"}
    assert {r["locked_by"] for r in stuck.values()} == {"exec-a (version pgq-test-v1)"}
    assert snap["leases"]["rows"] == []  # no workflow runs on a live executor
    assert {r["id"] for r in snap["dead"]["rows"]} == set(ids["doomed"])


def test_a_live_executor_makes_its_pending_workflows_running_not_stuck(
    dbos_world, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stated rule, the other way: while a DBOS executor is connected ('dbos_transact'
    sessions), pgq-top cannot tell whose PENDING workflows are orphaned, so none is stuck. Here a
    session named as DBOS names its own stands in for one, briefly."""
    fw, _, _ = dbos_world
    with psycopg.connect(fw.dsn, application_name="dbos_transact"):
        want = truth(fw)
        assert want[("gamma", "running")] == PENDING_KILLED and want[("gamma", "stuck")] == 0
        with psycopg.connect(fw.dsn, autocommit=True) as conn:
            model = single_queue(fw.dsn, kind="dbos").model
            (row,) = [
                r
                for r in conn.execute(model.counts[1].compose(), {"cap1": None}).fetchall()
                if r[0] == "gamma"
            ]
    assert tuple(row) == ("gamma", PENDING_KILLED, 0)
    # unless the user sets dbos_stuck_after: not connected by name and not updated for that long
    monkeypatch.setenv("PGQ_TOP_DBOS_STUCK_AFTER", "0.5")
    with psycopg.connect(fw.dsn, application_name="dbos_transact"), psycopg.connect(fw.dsn) as conn:
        model = single_queue(fw.dsn, kind="dbos").model
        assert "older than 0.5 s" in model.stuck_rule
        rows = conn.execute(model.counts[1].compose(), {"cap1": None}).fetchall()
    assert [tuple(r) for r in rows if r[0] == "gamma"] == [("gamma", 0, PENDING_KILLED)]


def test_check_reports_the_stuck_figure(dbos_world, capsys) -> None:
    fw, _, _ = dbos_world
    code, out, err = cli(capsys, "check", "--dsn", fw.dsn, "--kind", "dbos")
    assert "Traceback" not in out + err
    assert code in (1, 2), out  # stuck workflows: a warning at least
    first = out.splitlines()[0]
    assert "'stuck'=5" in first and "'ready'=50" in first, first


def test_why_names_the_rule(dbos_world, capsys) -> None:
    fw, _, _ = dbos_world
    code, out, err = cli(capsys, "why", "--dsn", fw.dsn, "--window", "1", "--interval", "0.5", "--json")
    assert "Traceback" not in out + err
    doc = json.dumps(json.loads(out))
    assert code in (WHY_WARNING, WHY_CRITICAL) and "executor not connected" in doc, out


def test_the_exporter_exports_the_counts(dbos_world) -> None:
    from test_exporter import scrape

    from pgq_tui.exporter.cache import SnapshotCache
    from pgq_tui.exporter.server import serve
    from pgq_tui.fleet.poll import TargetWatch
    from pgq_tui.targets import Target

    fw, _, _ = dbos_world
    who = {"kind": "dbos", "target": "dbos.workflow_status"}
    want = truth(fw)
    with TargetWatch(Target("db", fw.dsn)) as watch:
        http, _ = serve(SnapshotCache(watch, min_interval_s=0), "127.0.0.1:0")
        try:
            got = scrape(f"http://127.0.0.1:{http.server_address[1]}/metrics")
        finally:
            http.shutdown()
    for q in ENQUEUED:
        assert got.get("pgq_jobs", **who, queue=q, state="ready") == want[(q, "ready")]
    assert got.get("pgq_jobs", **who, queue="gamma", state="stuck") == PENDING_KILLED
    assert got.get("pgq_jobs", **who, queue="(no queue)", state="dead") == DEAD
    assert got.get("pgq_stuck_jobs", **who) == PENDING_KILLED


async def test_the_dashboard_labels_the_stuck_figure_with_the_rule(dbos_world) -> None:
    """On screen: the queues' counts, the 5 stuck workflows, and the verdict naming pgq-top's rule."""
    from test_dialect_tui import settle
    from test_tui_app import cells, plain

    from pgq_tui.actions import Actions
    from pgq_tui.monitor.collect import Monitor
    from pgq_tui.tui.app import PgqTopApp

    fw, ids, _ = dbos_world
    target = single_queue(fw.dsn, kind="dbos")
    monitor = Monitor(fw.dsn, target.model, read_only=True)
    actions = Actions(fw.dsn, target.model, read_only=True)
    app = PgqTopApp(monitor, actions=actions, target=target.label, interval=1.0, read_only=True)
    try:
        async with app.run_test(size=(200, 50)) as pilot:
            await settle(pilot, app)
            rows = {r[0]: r for r in cells(app.panel("queues"))}
            assert rows["gamma"][1] == "12" and rows["gamma"][4] == "5", rows["gamma"]  # ready, stuck
            assert sorted(r[1] for r in cells(app.panel("stuck"))) == sorted(ids["held"])
            verdict = plain(app.query_one("#verdict").content, width=200)
            assert "PENDING, executor not connected (pgq-top's rule, DBOS has no heartbeat)" in verdict
    finally:
        actions.close()
        monitor.close()


def test_search_finds_each_role_by_its_state_and_a_failure_by_its_text(dbos_world, capsys) -> None:
    """The search language on DBOS's own rows (#32): each state finds exactly the workflows of that
    role, and error:~ reads the text of the exception DBOS pickled (its default serializer)."""
    fw, ids, _ = dbos_world
    model = single_queue(fw.dsn, kind="dbos").model
    now = datetime.now(timezone.utc)

    def found(text: str) -> set[str]:
        return {str(i) for i in search(fw.dsn, model, parse(text, now), limit_scan=None, all_ids=True).ids}

    assert found("state:stuck") == set(ids["held"])
    assert found("state:dead") == set(ids["doomed"])
    assert found("state:failed") == set(ids["failing"])
    assert found("queue:alpha state:done") == set(ids["fast"])
    assert found("state:ready") == set(ids["ready"])
    # the failing workflows raised RuntimeError(f"always fails: fail-{i}"): one by its own text
    one = found('error:~"ALWAYS FAILS: fail-1" state:failed')
    assert len(one) == 1 and one <= set(ids["failing"])
    assert found('error:~"always fails"') == set(ids["failing"])
    code, out, err = cli(capsys, "jobs", "--dsn", fw.dsn, "--where", "state:stuck", "--json")
    assert (code, err) == (EXIT_OK, ""), err
    shown = json.loads(out)
    assert {str(r["id"]) for r in shown["jobs"]} == set(ids["held"]), shown
    assert {r["state"] for r in shown["jobs"]} == {"stuck"} and shown["matched"] == PENDING_KILLED


def test_cancel_is_refused_for_finished_workflows_and_resume_recovers_exactly_the_stuck(
    dbos_world, capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fw, ids, procs = dbos_world
    where = ("--dsn", fw.dsn, "--kind", "dbos")
    audit = tmp_path / "audit.jsonl"
    monkeypatch.setenv("PGQ_TOP_AUDIT_LOG", str(audit))
    before = fw.statuses()
    finished = [*ids["fast"], *ids["failing"]]  # SUCCESS and ERROR: DBOS's own cancel skips them
    code, _, err = cli(capsys, "cancel", *where, "--ids", ",".join(finished), "--yes")
    assert code == EXIT_REFUSED and "nothing to cancel" in err, err
    code, _, err = cli(capsys, "requeue", *where, "--ids", ",".join(ids["held"]), "--yes", "--read-only")
    assert code != EXIT_OK and "read-only" in err, err
    assert fw.statuses() == before

    code, _, err = cli(capsys, "requeue", *where, "--ids", ",".join(ids["held"]), "--yes")
    assert (code, err) == (EXIT_OK, ""), err
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(r["action"], r["event"]) for r in records] == [("requeue", "start"), ("requeue", "end")], records
    assert records[-1]["changed"] == PENDING_KILLED and sorted(records[0]["ids"]) == sorted(ids["held"])
    with psycopg.connect(fw.dsn) as conn:
        rows = conn.execute(
            "SELECT status, queue_name, recovery_attempts, started_at_epoch_ms, owner_xid, completed_at"
            " FROM dbos.workflow_status WHERE workflow_uuid = ANY(%s)",
            (ids["held"],),
        ).fetchall()
    assert set(rows) == {("ENQUEUED", "_dbos_internal_queue", 0, None, None, None)}  # DBOS's resume

    # a fresh executor (another id, the same application version, the fix deployed) serving none of
    # the three queues: DBOS's internal queue, where resume put them, is all it takes them from
    fresh = fw.executor(procs, "exec-b", (), fixed=True)
    keys = {f"hold-{i}" for i in range(PENDING_KILLED)}
    wait_for(
        "the fresh executor to finish the resumed workflows",
        lambda: {k for k, _, p in runs(fw.dsn, pid=fresh.pid) if p == "done"} >= keys,
        timeout=60,
    )
    wait_for("their status to be SUCCESS", lambda: all(fw.statuses()[w] == "SUCCESS" for w in ids["held"]))
    fresh.stop()
    ran = Counter((k, p) for k, _, p in runs(fw.dsn, pid=fresh.pid))
    assert ran == Counter({(k, p): 1 for k in keys for p in ("start", "done")})
    after = fw.statuses()
    assert {w for w, s in after.items() if s != before[w]} == set(ids["held"])
    assert all(after[w] == "ENQUEUED" for w in ids["ready"])
