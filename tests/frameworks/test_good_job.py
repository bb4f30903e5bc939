"""Issue 34's acceptance for good_job 4.19, on a schema built from its own install migration
(tests/dialect_cases/ddl/good_job.sql; the gem does not install here) with the rows its models write
(tests/dialect_cases/good_job.py): running jobs held by good_job's advisory locks from live sessions,
a foreign advisory lock on the same 64 bits that must not count, processes alive by lock or by
updated_at and expired ones. Every count pgq-top shows (snapshot, check, exporter) equals the plain-SQL
ground truth; `why` names the rule; discard and reschedule are guarded, refused under --read-only and
audited; retry answers "needs the app" and writes nothing; a worker session's end makes its jobs stuck.

One populated database for the module: the tests that only read come first, those that act last.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from dialect_cases import good_job as gj
from dialect_support import cli
from psycopg import sql
from psycopg.conninfo import make_conninfo

from pgq_tui.errors import EXIT_OK, EXIT_REFUSED

FIELDS = ("ready", "scheduled", "running", "stuck", "dead", "done")
WHERE = ("--kind", "good-job")


@pytest.fixture(scope="module")
def good_job_db(server_dsn: str) -> Iterator[str]:
    name = f"pgq_gj_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = make_conninfo(server_dsn, dbname=name)
    try:
        gj.install(dsn)
        gj.populate(dsn)
        yield dsn
    finally:
        with psycopg.connect(server_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def truth(dsn: str) -> Counter[tuple[str, str]]:
    with psycopg.connect(dsn) as conn:
        return Counter((j.queue, j.state) for j in gj.truth(conn))


def ids_in(dsn: str, state: str) -> list[str]:
    with psycopg.connect(dsn) as conn:
        return [j.id for j in gj.truth(conn) if j.state == state]


def shown(snap: dict[str, Any]) -> Counter[tuple[str, str]]:
    got: Counter[tuple[str, str]] = Counter()
    for q in snap["queues"]:
        for name in FIELDS:
            if q[name]:
                got[(q["queue"], name)] = q[name]
        if q["extra"].get("released"):
            got[(q["queue"], "released")] = q["extra"]["released"]
    return got


def rows(dsn: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as conn:
        return conn.execute("SELECT * FROM good_jobs ORDER BY id").fetchall()


def test_the_scenario_holds_live_locks_and_a_foreign_one(good_job_db) -> None:
    want = truth(good_job_db)
    assert want[("default", "running")] == 2 + 1 + 1 and want[("mailers", "running")] == 3
    assert want[("default", "released")] == 1
    assert want[("default", "stuck")] == 1 and want[("mailers", "stuck")] == 3
    assert want[("billing", "stuck")] == 1  # the foreign two-int lock on its 64 bits does not count
    with psycopg.connect(good_job_db) as conn:
        (locks,) = conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1"
        ).fetchone()  # type: ignore[misc]
    assert locks == 1 + 4 + 1 + 1  # the process, 4 held jobs, the locked one, the foreign bigint key


def test_snapshot_counts_equal_ground_truth_on_the_stock_schema(good_job_db, capsys) -> None:
    code, out, err = cli(capsys, "snapshot", "--json", "--dsn", good_job_db)  # detected, no --kind
    assert (code, err) == (EXIT_OK, ""), err
    snap = json.loads(out)
    assert snap["kind"] == "good-job" and "4.18+" in snap["target"], snap["target"]
    assert shown(snap) == truth(good_job_db)
    assert "advisory lock" in snap["stuck_rule"] and "GoodJob::Process.active" in snap["stuck_rule"]
    stuck = {r["id"] for r in snap["stuck"]["rows"]}
    assert stuck == set(ids_in(good_job_db, "stuck"))


def test_check_reports_the_stuck_figure(good_job_db, capsys) -> None:
    code, out, err = cli(capsys, "check", "--dsn", good_job_db, *WHERE)
    assert "Traceback" not in out + err
    assert code in (1, 2), out
    first = out.splitlines()[0]
    assert "'stuck'=5" in first and "'ready'=14" in first, first


def test_why_names_the_rule(good_job_db, capsys) -> None:
    code, out, err = cli(capsys, "why", "--dsn", good_job_db, "--window", "1", "--interval", "0.5", "--json")
    assert "Traceback" not in out + err
    doc = json.dumps(json.loads(out))
    assert code != EXIT_OK and "no advisory lock and its process expired" in doc, out


def test_the_exporter_exports_the_counts(good_job_db) -> None:
    from test_exporter import scrape

    from pgq_tui.exporter.cache import SnapshotCache
    from pgq_tui.exporter.server import serve
    from pgq_tui.fleet.poll import TargetWatch
    from pgq_tui.targets import Target

    who = {"kind": "good-job", "target": "public.good_jobs"}
    want = truth(good_job_db)
    with TargetWatch(Target("db", good_job_db)) as watch:
        http, _ = serve(SnapshotCache(watch, min_interval_s=0), "127.0.0.1:0")
        try:
            got = scrape(f"http://127.0.0.1:{http.server_address[1]}/metrics")
        finally:
            http.shutdown()
    for (queue, state), n in want.items():
        if state not in FIELDS:
            continue  # the labelled extra (released) is in the snapshot's `extra`
        assert got.get("pgq_jobs", **who, queue=queue, state=state) == n, (queue, state)
    assert got.get("pgq_stuck_jobs", **who) == 5


def test_actions_are_guarded_refused_read_only_and_audited(
    good_job_db, capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dsn = good_job_db
    where = ("--dsn", dsn, *WHERE)
    audit = tmp_path / "audit.jsonl"
    monkeypatch.setenv("PGQ_TOP_AUDIT_LOG", str(audit))
    before = rows(dsn)
    running, dead = ids_in(dsn, "running"), ids_in(dsn, "dead")
    code, _, err = cli(capsys, "cancel", *where, "--ids", ",".join(running), "--yes")
    assert code == EXIT_REFUSED and "nothing to" in err, err  # a live worker's job is never discarded
    code, _, err = cli(capsys, "retry", *where, "--ids", ",".join(dead), "--yes")
    assert code != EXIT_OK and "needs the app" in err and "ActiveJob" in err, err
    ready = ids_in(dsn, "ready")
    code, _, err = cli(capsys, "cancel", *where, "--ids", ",".join(ready), "--yes", "--read-only")
    assert code != EXIT_OK and "read-only" in err, err
    assert rows(dsn) == before

    stuck = ids_in(dsn, "stuck")
    code, _, err = cli(capsys, "cancel", *where, "--ids", ",".join([*ready[:2], *stuck]), "--yes")
    assert (code, err) == (EXIT_OK, ""), err
    with psycopg.connect(dsn) as conn:
        done = conn.execute(
            "SELECT DISTINCT error, error_event, finished_at IS NOT NULL FROM good_jobs"
            " WHERE id::text = ANY(%s)",
            ([*ready[:2], *stuck],),
        ).fetchall()
    assert done == [("GoodJob::Job::DiscardJobError: Discarded by pgq-top", 5, True)]  # _discard_job's
    scheduled = ids_in(dsn, "scheduled")
    code, _, err = cli(capsys, "requeue", *where, "--ids", ",".join(scheduled), "--yes")
    assert (code, err) == (EXIT_OK, ""), err
    assert set(scheduled) <= set(ids_in(dsn, "ready"))  # reschedule_job: scheduled_at now
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(r["action"], r["event"]) for r in records] == [
        ("cancel-jobs", "start"), ("cancel-jobs", "end"), ("requeue", "start"), ("requeue", "end")
    ], records  # fmt: skip
    assert records[1]["changed"] == 2 + len(stuck) and records[3]["changed"] == len(scheduled)


def test_a_worker_session_ending_makes_its_jobs_stuck(good_job_db) -> None:
    """The live worker's session ends (kill -9 of a good_job process): its process lock and its jobs'
    locks go, so by GoodJob::Process.active its process is gone and its running jobs are stuck;
    the skip-locked job of the process alive by updated_at stays running. Whatever ran before it on
    this module's database (xdist may hand the tests that discard the stuck jobs to another worker,
    with its own database), the jobs stuck already stay stuck."""
    running = set(ids_in(good_job_db, "running"))
    stuck_before = len(ids_in(good_job_db, "stuck"))
    for conn in gj._sessions:
        conn.close()
    with psycopg.connect(good_job_db) as conn:
        conn.execute("SELECT pg_sleep(0.2)")
    from pgq_tui.detection import single_queue

    model = single_queue(good_job_db, kind="good-job").model
    with psycopg.connect(good_job_db) as conn:
        got = Counter()
        for r in conn.execute(model.counts[1].compose(), {"cap1": None}).fetchall():
            got["running"] += r[1] or 0
            got["stuck"] += r[2] or 0
    want = truth(good_job_db)
    assert got["running"] == sum(n for (_, s), n in want.items() if s == "running") == 2
    stuck = sum(n for (_, s), n in want.items() if s == "stuck")
    assert got["stuck"] == stuck == stuck_before + len(running) - 2
