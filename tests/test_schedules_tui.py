"""The schedules on the dashboard (Solid Queue's recurring tables, its own DDL): a late schedule
names itself on the health line at 80x24, `S` opens the schedules screen (in the help's key list),
and a hostile task key stays literal."""

from __future__ import annotations

import time

import psycopg
from dialect_cases.solid_queue import install
from test_tui_app import plain, settle

from pgq_tui.detection import find_queues
from pgq_tui.diagnosis.findings import Thresholds
from pgq_tui.monitor.collect import Monitor
from pgq_tui.tui.app import PgqTopApp
from pgq_tui.tui.screens.schedules import SchedulesScreen

HOSTILE = "[bold red]pwned[/]"
UTC_NOW = "now() AT TIME ZONE 'UTC'"


def _tasks(dsn: str) -> None:
    install(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            f"""
            INSERT INTO solid_queue_recurring_tasks
                (key, schedule, class_name, static, created_at, updated_at)
            VALUES ('hourly_report', '0 * * * *', 'ReportJob', true, {UTC_NOW} - interval '1 day', {UTC_NOW}),
                   (%s, '*/5 * * * *', 'PingJob', true, {UTC_NOW}, {UTC_NOW})
            """,
            (HOSTILE,),
        )
        # the hourly task's last run was 3 hours ago: it missed two occurrences
        conn.execute(
            """
            WITH j AS (
                INSERT INTO solid_queue_jobs (queue_name, class_name, arguments, priority, active_job_id,
                                              scheduled_at, created_at, updated_at, finished_at)
                VALUES ('default', 'ReportJob', '{}', 0, gen_random_uuid()::text, x.t, x.t, x.t, x.t)
                RETURNING id, created_at
            )
            INSERT INTO solid_queue_recurring_executions (job_id, task_key, run_at, created_at)
            SELECT id, 'hourly_report', created_at, created_at FROM j
            """.replace("x.t", "date_trunc('hour', now() AT TIME ZONE 'UTC') - interval '3 hours'")
        )


async def test_a_late_schedule_on_the_health_line_and_the_schedules_screen(empty_dsn: str) -> None:
    _tasks(empty_dsn)
    (target,) = find_queues(empty_dsn, kind="solid-queue")
    monitor = Monitor(empty_dsn, target.model)
    app = PgqTopApp(monitor, interval=0.5, diagnosis=Thresholds(schedule_late_s=600))
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            deadline = time.monotonic() + 60
            line = ""
            while "schedule hourly_report" not in line:
                assert time.monotonic() < deadline, line
                await settle(pilot, app)
                line = plain(app.query_one("#verdict").content, 80).splitlines()[0]
            assert "last ran 3h" in line and len(line.rstrip()) <= 80
            await pilot.press("S")
            await pilot.pause()
            assert isinstance(app.screen, SchedulesScreen)
            body = plain(app.screen.query_one("#schedules-body").content, 160)
            assert "hourly_report" in body and "Every hour" in body and "LATE 2h" in body
            assert HOSTILE in body  # the task key, literally
            assert "solid_queue_recurring_executions.job_id" in body
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, SchedulesScreen)
    finally:
        monitor.close()


def test_the_exporter_serves_each_schedules_figures_and_leaves_unknown_ones_out(empty_dsn: str) -> None:
    from pgq_tui.exporter.schedules import schedule_families
    from pgq_tui.fleet.poll import QueueOutcome
    from pgq_tui.targets import Target

    _tasks(empty_dsn)
    (target,) = find_queues(empty_dsn, kind="solid-queue")
    with Monitor(empty_dsn, target.model) as monitor:
        snap = monitor.collect()
    outcome = QueueOutcome(Target(name="t", dsn=empty_dsn), target, snap)
    got = {
        (f.name, s.labels["schedule"]): s.value
        for f in schedule_families([(outcome, snap)])
        for s in f.samples
    }
    report = snap.schedules
    assert report is not None
    hourly = next(s for s in report.schedules if s.name == "hourly_report")
    assert got[("pgq_schedule_overdue_seconds", "hourly_report")] == hourly.overdue_s > 7200
    assert got[("pgq_schedule_last_run_timestamp_seconds", "hourly_report")] == hourly.last_run.timestamp()
    assert ("pgq_schedule_last_run_timestamp_seconds", HOSTILE) not in got  # never ran: absent, not 0
    assert ("pgq_schedule_next_run_timestamp_seconds", HOSTILE) in got
