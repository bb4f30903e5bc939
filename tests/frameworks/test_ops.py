"""`check`, the exporter and the fleet on a real framework: one database holding procrastinate (schema
by its own CLI, jobs by its own client, a real worker killed -9 during a slow job, a live worker
holding another) and pgq-top's own table beside it. Every figure is compared with ground-truth SQL
written from procrastinate's own rules. Dead jobs (no index: the operator created every advised index
but that one) and the kept succeeded jobs are read by scans, and reported like every other figure,
never UNKNOWN for want of an index; what the dialect has no such state for is absent, never 0.
"""

from __future__ import annotations

import json
import re
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families
from psycopg.conninfo import make_conninfo
from textual.widgets import DataTable

from pgq_tui.cli import main
from pgq_tui.detection import find_queues
from pgq_tui.exporter.cache import SnapshotCache
from pgq_tui.exporter.server import serve
from pgq_tui.fleet.poll import TargetWatch
from pgq_tui.fleet.poller import FleetPoller
from pgq_tui.monitor import open_monitor
from pgq_tui.queue import JobQueue
from pgq_tui.targets import Target
from pgq_tui.tui.app import BACK, PgqTopApp
from pgq_tui.tui.fleet import FleetApp

from .acceptance import Crashed, crash_during_slow_job
from .harness import Processes, create_runs_table, grouped
from .procrastinate_client import STALLED_S, Procrastinate

PGQ_READY = 3  # jobs enqueued in pgq-top's own table beside procrastinate's
FW = {"kind": "procrastinate", "target": "public.procrastinate_jobs"}
OWN = {"kind": "pgq", "target": "public.jobs"}


@dataclass(frozen=True)
class Mixed:
    dsn: str
    fw: Procrastinate
    crashed: Crashed

    def truth(self) -> dict[str, dict[str, int]]:
        """procrastinate's jobs per queue and canonical state, by a full scan (harness ground truth)."""
        return grouped(self.fw.truth())


@pytest.fixture(scope="module")
def mixed(server_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mixed]:
    Procrastinate.version()  # skips (fails under PGQ_REQUIRE_FRAMEWORKS=1) without the client
    name = f"pgq_ops_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(psycopg.sql.SQL("CREATE DATABASE {}").format(psycopg.sql.Identifier(name)))
    dsn = make_conninfo(server_dsn, dbname=name)
    procs = Processes.under(tmp_path_factory.mktemp("ops"))
    with pytest.MonkeyPatch.context() as env:
        # the test workers' stalled threshold, told to pgq-top as an operator would
        env.setenv("PGQ_TOP_STALLED_AFTER", str(STALLED_S))
        try:
            create_runs_table(dsn)
            fw = Procrastinate(dsn)
            fw.install()
            # the indexes pgq-top advises, as an operator would create them, all but the one for
            # failed jobs: so dead jobs are read by a scan (the index named beside them)
            for advice in find_queues(dsn, kind="procrastinate")[0].model.advice:
                if "dead" not in advice.states:
                    with psycopg.connect(dsn, autocommit=True) as conn:
                        for statement in advice.statements:
                            conn.execute(statement)
            crashed = crash_during_slow_job(fw, procs)
            with JobQueue(dsn) as q:
                q.install()
                q.enqueue("emails", [{}] * PGQ_READY)
            yield Mixed(dsn, fw, crashed)
        finally:
            procs.stop_all()
            with psycopg.connect(server_dsn, autocommit=True) as admin:
                admin.execute(
                    psycopg.sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                        psycopg.sql.Identifier(name)
                    )
                )


def check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, dict[str, str]]:
    code = main(["check", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    perf = dict(re.findall(r"'((?:[^']|'')+)'=(\S+)", out.splitlines()[0].partition(" | ")[2]))
    return code, out, perf


def test_check_names_each_queue_and_the_framework_rule(
    mixed: Mixed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    truth = mixed.truth()
    stuck = sum(s.get("stuck", 0) for s in truth.values())
    assert stuck == 1 and truth["fail"] == {"dead": 1}  # the killed worker's slow job; the failing one
    code, out, perf = check(capsys, "--dsn", mixed.dsn, "--stuck-crit", "0")
    status = out.splitlines()[0].partition(" | ")[0]
    assert code == 2, out
    rule = "stalled: doing, and its worker is gone or silent for 2 s (procrastinate's stalled_worker_timeout"
    # the root cause first (the diagnosis: its worker is gone, R requeues), then the measure's verdict
    assert status.startswith("PGQ CRITICAL: procrastinate: 1 stuck jobs, their workers gone · R; "), out
    assert f"; procrastinate: 1 stuck jobs ({rule}" in status, out
    assert "1 with no live holder" in status  # procrastinate's heartbeats say the worker is gone
    assert perf["procrastinate:stuck"] == "1;0;0;0" and perf["pgq:ready"] == f"{PGQ_READY};;;0"
    for state in ("ready", "scheduled", "running"):
        n = sum(s.get(state, 0) for s in truth.values())
        assert perf[f"procrastinate:{state}"] == f"{n};;;0", state
    # no index on failed jobs: dead is still counted, by a scan (the table is small), and reported
    assert perf["procrastinate:dead"].startswith("1;") and perf["pgq:dead"] == "0;0;1000;0"
    assert not [line for line in out.splitlines() if "needs an index" in line or " unknown: " in line]

    code, out, _ = check(capsys, "--dsn", mixed.dsn, "--kind", "pgq")  # a pin checks one queue
    assert code == 0 and out.startswith(f"PGQ OK: {PGQ_READY} ready, 0 running"), out
    targets = tmp_path / "targets.toml"
    targets.write_text(f'[targets.jobs]\ndsn = {json.dumps(mixed.dsn)}\nkind = "procrastinate"\n')
    code, out, perf = check(capsys, "--targets", str(targets), "--json")
    doc = json.loads(out)
    assert code == 1 and [(t["name"], t["kind"], t["status"]) for t in doc["targets"]] == [
        ("jobs", "procrastinate", "WARNING")
    ]


def scrape(url: str, openmetrics: bool = False) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    headers = {"Accept": "application/openmetrics-text; version=1.0.0"} if openmetrics else {}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as resp:
        body = resp.read().decode()
    parser = parse_openmetrics if openmetrics else text_string_to_metric_families
    samples = {}
    for family in parser(body):
        for s in family.samples:
            key = (s.name, tuple(sorted(s.labels.items())))
            assert key not in samples, f"duplicate sample {key}"
            samples[key] = s.value
    return samples


def test_exporter_reports_each_queue_with_ground_truth_counts(mixed: Mixed) -> None:
    with TargetWatch(Target("db", mixed.dsn)) as watch:
        http, _ = serve(SnapshotCache(watch, min_interval_s=0), "127.0.0.1:0")
        try:
            url = f"http://127.0.0.1:{http.server_address[1]}/metrics"
            got = scrape(url)
            truth = mixed.truth()  # the tables do not move now: the live worker holds its one job
            assert scrape(url, openmetrics=True)[("pgq_up", ())] == 1  # the OpenMetrics parser agrees
        finally:
            http.shutdown()

    def value(name: str, **labels: str) -> float | None:
        return got.get((name, tuple(sorted(labels.items()))))

    assert value("pgq_up") == 1 and value("pgq_last_error_code") == 0
    assert value("pgq_queue_up", **FW) == value("pgq_queue_up", **OWN) == 1
    jobs = {
        (dict(labels)["queue"], dict(labels)["state"]): v
        for (name, labels), v in got.items()
        if name == "pgq_jobs" and dict(labels)["kind"] == "procrastinate"
    }
    served = {"ready", "scheduled", "running", "stuck", "dead", "done"}  # dead and done by scans
    assert {s for _, s in jobs} == served
    assert any(s.get("dead") for s in truth.values()) and any(s.get("done") for s in truth.values())
    for queue, states in truth.items():
        for state in served:
            assert jobs.get((queue, state), 0) == states.get(state, 0), (queue, state)
    assert all(n == truth.get(q, {}).get(s, 0) for (q, s), n in jobs.items())
    assert value("pgq_stuck_jobs", **FW) == 1 and value("pgq_stuck_jobs", **OWN) == 0
    assert value("pgq_jobs", **OWN, queue="emails", state="ready") == PGQ_READY
    assert value("pgq_jobs", **FW, queue="fail", state="dead") == 1
    assert value("pgq_panel_up", **FW, panel="dead") == 1
    assert value("pgq_panel_up", **FW, panel="leases") == 1
    # procrastinate keeps no counters: no _total series for it, pgq-top's own table has them
    assert value("pgq_jobs_completed_total", **FW) is None
    assert value("pgq_table_live_tuples", **FW, table="public.procrastinate_jobs") is not None
    assert value("pgq_backends") is not None  # database-wide: once, without queue labels


async def test_fleet_rows_per_queue_and_enter_opens_the_right_one(mixed: Mixed, dsn: str) -> None:
    targets = [
        Target("own", dsn),  # pgq-top's table only
        Target("mixed", mixed.dsn),  # two queues: two rows
        Target("fw", mixed.dsn, kind="procrastinate"),  # pinned
    ]
    truth = mixed.truth()
    ready = sum(s.get("ready", 0) for s in truth.values())
    poller = FleetPoller(targets, interval=0.5).start()
    try:
        app = FleetApp(poller, interval=0.5)
        async with app.run_test(size=(120, 20)) as pilot:
            while len(app.rows) < 4 or any(r.state != "up" for r in app.rows):
                await pilot.pause(0.1)
            await pilot.pause(0.6)  # a render after the last row came up
            assert [(r.name, r.kind, r.table) for r in app.rows] == [
                ("own", "pgq", "public.jobs"),
                ("mixed/pgq", "pgq", "public.jobs"),
                ("mixed/procrastinate", "procrastinate", "public.procrastinate_jobs"),
                ("fw", "procrastinate", "public.procrastinate_jobs"),
            ]
            fw_row = app.rows[3]
            dead = sum(s.get("dead", 0) for s in truth.values())
            assert dead == 1 and (fw_row.ready, fw_row.stuck, fw_row.dead) == (ready, 1, dead)
            assert fw_row.unknown == ()  # counted by a scan: nothing left unknown for want of an index
            assert app.rows[1].ready == PGQ_READY
            table = app.query_one(DataTable)
            assert str(table.get_cell("fw", "kind")) == "procrastinate"
            assert str(table.get_cell("fw", "dead")) == "1" and str(table.get_cell("own", "dead")) == "0"
            await pilot.press("down", "down", "enter")
        assert app.return_value == "mixed/procrastinate"
        entry = poller.entry(app.return_value)
    finally:
        poller.stop()
    # what run_fleet opens for that row: the row's own queue, not the database's first one
    assert entry is not None and entry.queue is not None and entry.queue.kind == "procrastinate"
    with open_monitor(mixed.dsn, entry.queue.model, read_only=True) as monitor:
        first = monitor.collect()
        assert (first.kind, first.stuck.total) == ("procrastinate", 1)
        dashboard = PgqTopApp(monitor, back=True, poll=False, initial=first, target=entry.queue.label)
        async with dashboard.run_test(size=(100, 30)) as pilot:
            await pilot.pause(0.2)
            assert "procrastinate" in dashboard.header_line().plain  # the header says which queue
            await pilot.press("escape")
        assert dashboard.return_value == BACK
