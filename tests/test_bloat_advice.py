"""The advisor: settings computed from the measured rates (not fixed values), applied per table from
the dashboard with the usual confirmation, refused under --read-only; `pgq-top advise` on the CLI."""

from __future__ import annotations

import dataclasses
import json
import time

import psycopg
import pytest
from actions_support import pgq_actions
from monitor_support import pgq_monitor

from pgq_tui.actions import Actions
from pgq_tui.cli import main
from pgq_tui.detection import find_queues
from pgq_tui.monitor.advice import advise
from pgq_tui.monitor.bloat import BloatReport, ClaimCost, Pacing
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.queue import JobQueue
from pgq_tui.tui.screens.advice import AdviceScreen
from pgq_tui.tui.screens.confirm import ConfirmScreen
from tests.test_tui_app import dashboard, plain, settle

RESET = (
    "ALTER TABLE jobs RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, "
    "autovacuum_vacuum_cost_delay, fillfactor)"
)


def measured(snap: Snapshot, rate: float, vacuum_s: float = 2.0, slope: float = 0.002) -> Snapshot:
    """A real snapshot with the churn PERF_NOTES measured (200k jobs, 4 clients, stock settings)."""
    table = dataclasses.replace(
        snap.table, vacuum_threshold=40_050.0, vacuum_scale_factor=0.2, vacuum_base_threshold=50,
        total_rows_estimate=200_000,
    )  # fmt: skip
    assert snap.bloat is not None and snap.bloat.settings is not None
    settings = dataclasses.replace(snap.bloat.settings, naptime_s=60.0, cost_delay_ms=2.0, cost_limit=200,
                                   idle_tx_timeout_ms=0.0)  # fmt: skip
    probe = ClaimCost("q", (), 6, 1.0, "ok", "", 10.0, buffers_per_dead=slope)
    pacing = Pacing(rate, 40_050.0, None, None, vacuum_s, "measured", None, "naptime", True, "crit", "")
    return dataclasses.replace(snap, table=table, bloat=BloatReport(probe, pacing, None, settings))


@pytest.fixture
def snap(dsn: str, queue: JobQueue) -> Snapshot:
    queue.enqueue("q", [{}] * 10)
    with pgq_monitor(dsn) as monitor:
        return monitor.collect()


def test_recommendations_follow_the_measured_rates(snap: Snapshot) -> None:
    fast = advise(measured(snap, 5000.0), "public", "jobs")
    opts = fast.table_options
    assert opts["autovacuum_vacuum_scale_factor"] == "0"
    # budget: (4 - 1) x 6 buffers / 0.002 per dead tuple = 9k dead tuples; a 2 s vacuum throttled by
    # cost_delay is the first thing to shorten, then naptime 1 s and the threshold half a visit's churn
    assert int(opts["autovacuum_vacuum_cost_limit"]) > 200
    server = {r.name: r for r in fast.recommendations if r.scope == "server"}
    assert server["autovacuum_naptime"].value == "1s"
    assert "naptime is the limiter" in server["autovacuum_naptime"].reason
    assert "idle_in_transaction_session_timeout" in server
    assert fast.server_sql[-1] == "SELECT pg_reload_conf()"
    assert any("autovacuum_naptime" in line for line in fast.server_sql)
    assert fast.table_sql is not None and fast.table_sql.startswith('ALTER TABLE "public"."jobs" SET (')
    for r in fast.recommendations:
        assert r.reason and r.value != r.current

    # a tenth of the churn: a higher threshold and a longer naptime are enough
    slow = advise(measured(snap, 500.0), "public", "jobs")
    assert int(slow.table_options["autovacuum_vacuum_threshold"]) != int(opts["autovacuum_vacuum_threshold"])
    slow_nap = {r.name: r.value for r in slow.recommendations if r.scope == "server"}.get(
        "autovacuum_naptime"
    )
    assert slow_nap is not None and int(slow_nap[:-1]) > 1


def test_no_churn_no_table_advice(snap: Snapshot) -> None:
    advice = advise(measured(snap, 0.0), "public", "jobs")
    assert advice.table_sql is None
    assert any("advise while the queue is busy" in n for n in advice.notes)


def test_apply_and_read_only(dsn: str, snap: Snapshot, sql: psycopg.Connection) -> None:
    advice = advise(measured(snap, 5000.0), "public", "jobs")
    with pgq_actions(dsn, read_only=True) as ro:
        plan = ro.plan_tune(advice)
        assert plan.refused == "read-only mode"
        assert ro.execute(plan).changed == 0
    with pgq_actions(dsn) as actions:
        plan = actions.plan_tune(advice)
        assert plan.refused is None and plan.sql == advice.table_sql
        outcome = actions.execute(plan)
    assert outcome.error is None and outcome.changed == 1
    options = sql.execute("SELECT reloptions FROM pg_class WHERE oid = 'jobs'::regclass").fetchone()[0]
    for name, value in advice.table_options.items():
        assert f"{name}={value}" in options


def test_apply_on_a_framework_table(snap: Snapshot, empty_dsn: str) -> None:
    """Autovacuum settings are per table, not per framework: procrastinate's own jobs table (schema by
    its CLI) takes the advice like pgq-top's, through the same Actions over its dialect."""
    from frameworks.procrastinate_client import Procrastinate

    Procrastinate.version()  # skips (or fails under PGQ_REQUIRE_FRAMEWORKS=1) without procrastinate
    Procrastinate(empty_dsn).install()
    (target,) = find_queues(empty_dsn, kind="procrastinate")
    with Actions(empty_dsn, target.model) as actions:
        assert actions.relation == ("public", "procrastinate_jobs")
        elsewhere = actions.plan_tune(advise(measured(snap, 5000.0), "public", "jobs"))
        assert "this queue's table is public.procrastinate_jobs" in (elsewhere.refused or "")
        advice = advise(measured(snap, 5000.0), *actions.relation)
        plan = actions.plan_tune(advice)
        assert plan.refused is None and plan.sql.startswith('ALTER TABLE "public"."procrastinate_jobs" SET')
        outcome = actions.execute(plan)
        assert (outcome.changed, outcome.error) == (1, None)
    with psycopg.connect(empty_dsn) as conn:
        query = "SELECT reloptions FROM pg_class WHERE oid = 'procrastinate_jobs'::regclass"
        options = conn.execute(query).fetchone()[0]
    assert {f"{name}={value}" for name, value in advice.table_options.items()} <= set(options)


async def test_advisor_key_applies_with_confirmation(dsn: str, sql: psycopg.Connection) -> None:
    sql.execute(RESET)
    with JobQueue(dsn) as q:
        q.enqueue("q", [{}] * 3000)
        async with dashboard(dsn, interval=0.5) as (app, pilot):
            for _ in range(4):  # churn between polls: the advisor needs a measured rate
                q.complete(q.claim("q", limit=500))
                q.conn.execute("SELECT pg_stat_force_next_flush()")  # the claimer's stats, now
                time.sleep(0.3)
                await settle(pilot, app)
            await pilot.press("A")
            await pilot.pause(0.3)
            assert isinstance(app.screen, AdviceScreen)
            body = plain(app.screen.query_one("#advice-body").content)
            assert "autovacuum_vacuum_scale_factor" in body and "ALTER TABLE" in body
            await pilot.press("a")
            await pilot.pause(0.8)
            assert isinstance(app.screen, ConfirmScreen)
            assert "ALTER TABLE" in plain(app.screen.query_one("#confirm-body").content)
            await pilot.press("y")
            await settle(pilot, app)
    options = sql.execute("SELECT reloptions FROM pg_class WHERE oid = 'jobs'::regclass").fetchone()[0]
    assert "autovacuum_vacuum_scale_factor=0" in options


async def test_advisor_is_view_only_under_read_only(dsn: str, sql: psycopg.Connection) -> None:
    sql.execute(RESET)
    before = sql.execute("SELECT reloptions FROM pg_class WHERE oid = 'jobs'::regclass").fetchone()[0]
    async with dashboard(dsn, read_only=True) as (app, pilot):
        await pilot.press("A")
        await pilot.pause(0.3)
        assert isinstance(app.screen, AdviceScreen) and not app.screen.can_apply
        await pilot.press("a")
        await pilot.pause(0.3)
        assert isinstance(app.screen, AdviceScreen)  # no confirmation: nothing to apply
    after = sql.execute("SELECT reloptions FROM pg_class WHERE oid = 'jobs'::regclass").fetchone()[0]
    assert after == before


def test_cli_advise(dsn: str, queue: JobQueue, capsys: pytest.CaptureFixture[str]) -> None:
    queue.enqueue("q", [{}] * 100)
    assert main(["advise", "--dsn", dsn, "--seconds", "1"]) == 0
    out = capsys.readouterr().out
    assert "advice for public.jobs" in out and "measured:" in out
    assert main(["advise", "--dsn", dsn, "--seconds", "0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["table"] == "public.jobs" and "recommendations" in data


def test_cli_advise_bad_dsn(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["advise", "--dsn", "host=/nonexistent port=1", "--seconds", "0"]) != 0
    assert "pgq-top: error:" in capsys.readouterr().err
