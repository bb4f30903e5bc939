"""Issue 34's acceptance for Que (schema version 7, que 2.4.1): the schema built from Que's own
migrations (tests/dialect_cases/ddl/que.sql, the gem does not install here), jobs moved by Que's own
SQL and run the way Que's locker runs them: sessions registered in que_lockers holding
pg_try_advisory_lock(id) (tests/dialect_cases/que.py). Every count pgq-top shows (snapshot, check,
exporter) equals the plain-SQL ground truth, including the running jobs, while another
application's advisory locks (a job's id from a session not in que_lockers, the two-int4 form, a key
that is no job's id) never count; the stuck rule (an unregistered Que locker, or a locker's backend
idle past que_stuck_after); `why` blames no crashed worker (the
holder's session is connected); retry and discard are guarded, refused under
--read-only and audited.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from dialect_cases import que
from dialect_support import cli
from psycopg import sql
from psycopg.conninfo import make_conninfo

from pgq_tui.detection import single_queue
from pgq_tui.errors import EXIT_OK, EXIT_REFUSED

FIELDS = ("ready", "scheduled", "running", "stuck", "dead", "done")


@pytest.fixture(scope="module")
def que_dsn(server_dsn: str) -> Iterator[str]:
    name = f"pgq_que_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = make_conninfo(server_dsn, dbname=name)
    try:
        que.install(dsn)
        que.populate(dsn)
        yield dsn
    finally:
        que.close(dsn)
        with psycopg.connect(server_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def truth(dsn: str) -> Counter[tuple[str, str]]:
    with psycopg.connect(dsn) as conn:
        return Counter((j.queue, j.state) for j in que.truth(conn))


def ids_in(dsn: str, state: str) -> list[int]:
    with psycopg.connect(dsn) as conn:
        return sorted(j.id for j in que.truth(conn) if j.state == state)


def foreign_keys(dsn: str) -> list[int]:
    """The job ids other applications hold advisory locks on (the billing-app session)."""
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT l.objid::bigint FROM pg_locks l JOIN pg_stat_activity a USING (pid)"
            " WHERE l.locktype = 'advisory' AND a.application_name = 'billing-app'"
        ).fetchall()
    return sorted(r[0] for r in rows)


def shown(snap: dict[str, Any]) -> Counter[tuple[str, str]]:
    got: Counter[tuple[str, str]] = Counter()
    for q in snap["queues"]:
        for name in FIELDS:
            if q[name]:
                got[(q["queue"], name)] = q[name]
        if q["extra"].get("errored"):
            got[(q["queue"], "errored")] = q["extra"]["errored"]
    return got


def test_the_scenario_holds_running_jobs_and_foreign_locks(que_dsn) -> None:
    """The ground truth itself: 3 jobs running under a registered locker, 1 under a Que locker with no
    que_lockers row; the jobs other applications lock are ready (Que's poller would skip them, but
    no Que worker runs them)."""
    want = truth(que_dsn)
    assert (want[("default", "running")], want[("mailers", "running")]) == (2, 1)
    assert want[("mailers", "stuck")] == 1
    assert sum(want[(q, "dead")] for q in ("default", "mailers")) == 2
    foreign = foreign_keys(que_dsn)
    assert len(foreign) == 2 and set(foreign) <= set(ids_in(que_dsn, "ready"))
    with psycopg.connect(que_dsn) as conn:
        (comment,) = conn.execute("SELECT obj_description('que_jobs'::regclass, 'pg_class')").fetchone()
    assert comment == "7"


def test_snapshot_counts_equal_ground_truth_on_the_stock_schema(que_dsn, capsys) -> None:
    code, out, err = cli(capsys, "snapshot", "--json", "--dsn", que_dsn)  # detected, no --kind
    assert (code, err) == (EXIT_OK, ""), err
    snap = json.loads(out)
    assert snap["kind"] == "que" and "schema 7" in snap["target"], (snap["kind"], snap["target"])
    assert shown(snap) == truth(que_dsn)
    for q in snap["queues"]:
        for name, figure in q["figures"].items():
            assert figure["accuracy"] in ("exact", "stale", "unsupported") and figure["as_of"], (name, figure)
    assert "que_lockers" in snap["stuck_rule"] and "Another application" in snap["stuck_rule"]
    assert {r["id"] for r in snap["stuck"]["rows"]} == set(ids_in(que_dsn, "stuck"))
    running = {r["id"] for r in snap["leases"]["rows"]}
    assert running == set(ids_in(que_dsn, "running")) and not running & set(foreign_keys(que_dsn))
    assert {r["id"] for r in snap["dead"]["rows"]} == set(ids_in(que_dsn, "dead"))


def test_a_locker_idle_past_que_stuck_after_is_stuck(que_dsn, monkeypatch: pytest.MonkeyPatch) -> None:
    """The idle half of the rule: a registered locker whose backend has been idle longer than
    que_stuck_after holds its jobs stuck; one that just ran a statement holds them running."""
    monkeypatch.setenv("PGQ_TOP_QUE_STUCK_AFTER", "1")
    busy = que.LOCKERS[que_dsn][0]  # the registered locker holding the 3 running jobs
    idle = que.locker(que_dsn, ["default"], ruby_pid=4200)
    try:
        with psycopg.connect(que_dsn) as conn:
            job = max(j.id for j in que.truth(conn) if (j.queue, j.state) == ("default", "ready"))
        que.lock(idle, [job])
        time.sleep(1.5)
        busy.execute("SELECT 1")  # a locker polling: its backend's state changed just now
        model = single_queue(que_dsn, kind="que").model
        assert "idle longer than 1 s" in model.stuck_rule
        with psycopg.connect(que_dsn) as conn:
            rows = conn.execute(model.counts[1].compose(), {"cap1": None}).fetchall()
        got = {r[0]: (r[1], r[2]) for r in rows}
        assert got == {"default": (2, 1), "mailers": (1, 1)}, got
    finally:
        que.LOCKERS[que_dsn].remove(idle)
        idle.close()
    assert truth(que_dsn)[("default", "stuck")] == 0  # its lock went with its session


def test_check_reports_the_stuck_figure(que_dsn, capsys) -> None:
    code, out, err = cli(capsys, "check", "--dsn", que_dsn, "--kind", "que")
    assert "Traceback" not in out + err
    assert code in (1, 2), out  # a stuck job: a warning at least
    first = out.splitlines()[0]
    assert "'stuck'=1" in first, first


def test_why_does_not_call_a_connected_locker_crashed(que_dsn, capsys) -> None:
    """`why` reads the Que queue, and blames no crashed worker: a Que lock is held by a connected
    backend (a session advisory lock ends with its session), so the stuck job's holder is 'unknown',
    never 'gone', and `why`'s crashed rule counts only holders known to be gone."""
    code, out, err = cli(capsys, "why", "--dsn", que_dsn, "--window", "1", "--interval", "0.5", "--json")
    assert "Traceback" not in out + err
    doc = json.loads(out)
    (queue,) = doc["queues"]
    assert (code, queue["kind"], queue["error"]) == (EXIT_OK, "que", None), out
    assert "crashed" not in json.dumps(queue["chains"]), out


def test_the_exporter_exports_the_counts(que_dsn) -> None:
    from test_exporter import scrape

    from pgq_tui.exporter.cache import SnapshotCache
    from pgq_tui.exporter.server import serve
    from pgq_tui.fleet.poll import TargetWatch
    from pgq_tui.targets import Target

    who = {"kind": "que", "target": "public.que_jobs"}
    want = truth(que_dsn)
    with TargetWatch(Target("db", que_dsn)) as watch:
        http, _ = serve(SnapshotCache(watch, min_interval_s=0), "127.0.0.1:0")
        try:
            got = scrape(f"http://127.0.0.1:{http.server_address[1]}/metrics")
        finally:
            http.shutdown()
    for q in ("default", "mailers"):
        for state in ("ready", "running"):
            assert got.get("pgq_jobs", **who, queue=q, state=state) == want[(q, state)], (q, state)
    assert got.get("pgq_stuck_jobs", **who) == 1


def test_retry_and_discard_are_guarded_read_only_refused_and_audited(
    que_dsn, capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = ("--dsn", que_dsn, "--kind", "que")
    audit = tmp_path / "audit.jsonl"
    monkeypatch.setenv("PGQ_TOP_AUDIT_LOG", str(audit))
    expired, running = ids_in(que_dsn, "dead"), ids_in(que_dsn, "running")
    code, _, err = cli(capsys, "discard", *where, "--ids", ",".join(map(str, running)), "--yes")
    assert code == EXIT_REFUSED, err  # a job a Que lock holds is never discarded
    code, _, err = cli(capsys, "retry", *where, "--ids", ",".join(map(str, expired)), "--yes", "--read-only")
    assert code != EXIT_OK and "read-only" in err, err
    assert ids_in(que_dsn, "dead") == expired and ids_in(que_dsn, "running") == running

    code, _, err = cli(capsys, "retry", *where, "--ids", str(expired[0]), "--yes")
    assert (code, err) == (EXIT_OK, ""), err
    with psycopg.connect(que_dsn) as conn:
        row = conn.execute(
            "SELECT error_count, expired_at, finished_at, run_at <= now() FROM que_jobs WHERE id = %s",
            (expired[0],),
        ).fetchone()
    assert row == (0, None, None, True)  # Que's documented retry: ready at once
    code, _, err = cli(capsys, "discard", *where, "--ids", str(expired[1]), "--yes")
    assert (code, err) == (EXIT_OK, ""), err
    assert ids_in(que_dsn, "dead") == [] and expired[1] not in {j for s in FIELDS for j in ids_in(que_dsn, s)}
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(r["action"], r["event"]) for r in records][-4:] == [
        ("retry", "start"), ("retry", "end"), ("discard", "start"), ("discard", "end")
    ], records  # fmt: skip
    assert ids_in(que_dsn, "running") == running


def test_on_the_stock_schema_the_ready_count_walks_fewer_heap_rows_and_stays_true(empty_dsn: str) -> None:
    """Each que_poll_idx entry the waiting counts walk costs a heap row on the stock schema, so its poll
    counts up to STOCK_COUNT_CAP (not the monitor's 1,000): 300 ready jobs are at least 250 at the
    poll, then the background counter's exact 300, stale with its age; never a wrong number. With the
    advised index the counts are index-only and the monitor's own cap counts them live."""
    from pgq_tui.dialects.que.dialect import STOCK_COUNT_CAP
    from pgq_tui.monitor.collect import DEFAULT_COUNT_CAP, Monitor
    from pgq_tui.monitor.snapshot import AT_LEAST, EXACT, STALE

    que.install(empty_dsn)
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        que.enqueue(conn, "bulk", 300)
        que.enqueue(conn, "small", 10)
    model = single_queue(empty_dsn, kind="que").model
    assert model.count_cap == STOCK_COUNT_CAP < 300 < DEFAULT_COUNT_CAP
    with Monitor(empty_dsn, model, count_interval_s=0.1, probe_interval_s=0) as monitor:
        first = {q.queue: q for q in monitor.collect().queues}
        assert monitor.cap == STOCK_COUNT_CAP
        assert (first["small"].ready, first["small"].figures["ready"].accuracy) == (10, EXACT)
        bulk = first["bulk"]
        assert (bulk.ready, bulk.figures["ready"].accuracy) in ((STOCK_COUNT_CAP, AT_LEAST), (300, STALE))
        assert monitor.settle(30)
        later = {q.queue: q for q in monitor.collect().queues}
    assert (later["bulk"].ready, later["bulk"].figures["ready"].accuracy) == (300, STALE)
    assert (later["small"].ready, later["small"].figures["ready"].accuracy) == (10, EXACT)

    que.follow_index_advice(empty_dsn, "que")
    advised = single_queue(empty_dsn, kind="que").model
    assert advised.count_cap is None and not advised.advice
    with Monitor(empty_dsn, advised, probe_interval_s=0) as monitor:
        bulk = {q.queue: q for q in monitor.collect().queues}["bulk"]
        assert monitor.cap == DEFAULT_COUNT_CAP
    assert (bulk.ready, bulk.figures["ready"].accuracy) == (300, EXACT)
