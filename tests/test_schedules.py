"""The schedules' pure figures (pgq_tui.schedules): next run and due time in the stored zone across
DST changes, overdue and late, unknown never 0; and Solid Queue's recurring tasks read from its own
queue_schema.rb tables, with the right next run."""

from __future__ import annotations

import doctest
import json
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import psycopg
import pytest
from dialect_cases.solid_queue import enqueue, install
from dialect_support import cli
from test_tui_sample import make_snapshot

from pgq_tui.diagnosis.findings import Thresholds
from pgq_tui.diagnosis.schedules import late_schedules
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.schedules import cron, crontab, model, view, words
from pgq_tui.schedules.model import ScheduleReport, evaluate

BERLIN = ZoneInfo("Europe/Berlin")
UTC = timezone.utc


@pytest.mark.parametrize("module", [cron, crontab, words, model, view])
def test_doctests(module: object) -> None:
    assert doctest.testmod(module).failed == 0  # type: ignore[arg-type]


def row(expression: str | None, zone: str | None, last: datetime | None, **kw: object) -> dict[str, object]:
    return {"name": "nightly-report", "expression": expression, "timezone": zone, "last_run": last, **kw}


def test_next_run_skips_the_hour_spring_dst_removes() -> None:
    # 2026-03-29 02:00 CET -> 03:00 CEST: 02:30 does not exist that night; the run is at 03:00 CEST
    now = datetime(2026, 3, 28, 12, 0, tzinfo=BERLIN)
    s = evaluate(row("30 2 * * *", "Europe/Berlin", datetime(2026, 3, 28, 2, 30, tzinfo=BERLIN)), now)
    assert s.next_run == datetime(2026, 3, 29, 3, 0, tzinfo=BERLIN)
    assert s.next_run.utcoffset() == timedelta(hours=2)
    assert s.due == s.next_run and s.overdue_s == 0.0 and s.late(60) is False
    # the day after, the period is 24h again, 02:30 CEST (00:30 UTC)
    after = evaluate(row("30 2 * * *", "Europe/Berlin", s.next_run), s.next_run + timedelta(hours=1))
    assert after.next_run.astimezone(UTC) == datetime(2026, 3, 30, 0, 30, tzinfo=UTC)


def test_late_across_autumn_dst_counts_wall_clock_hours() -> None:
    # 2026-10-25 03:00 CEST -> 02:00 CET: a daily 09:00 Berlin job is 25 real hours apart that day
    last = datetime(2026, 10, 24, 9, 0, tzinfo=BERLIN)
    now = datetime(2026, 10, 26, 11, 0, tzinfo=BERLIN)  # missed the 25th at 09:00 CET
    s = evaluate(row("0 9 * * *", "Europe/Berlin", last), now)
    assert s.due == datetime(2026, 10, 25, 9, 0, tzinfo=BERLIN)
    assert s.period_s == 25 * 3600  # 24h of wall clock, one extra hour of real time
    assert s.overdue_s == (24 + 2) * 3600  # 25th 09:00 CET to 26th 11:00 CET
    assert s.late(3600) is True and s.late(27 * 3600) is False
    assert s.late_line() == "schedule nightly-report last ran 2d03h ago, due every 25h"


def test_the_same_expression_in_utc_is_due_an_hour_apart() -> None:
    now = datetime(2026, 7, 1, 10, 0, tzinfo=UTC)  # 12:00 in Berlin (CEST)
    berlin = evaluate(row("0 13 * * *", "Europe/Berlin", None), now)
    utc = evaluate(row("0 13 * * *", None, None), now)
    assert berlin.next_run == datetime(2026, 7, 1, 11, 0, tzinfo=UTC)
    assert utc.next_run == datetime(2026, 7, 1, 13, 0, tzinfo=UTC)


def test_the_report_line_and_late_for_a_daily_schedule() -> None:
    now = datetime(2026, 12, 2, 4, 0, tzinfo=UTC)
    s = evaluate(row("0 2 * * *", "UTC", now - timedelta(hours=26)), now)
    assert s.late_line() == "schedule nightly-report last ran 26h ago, due every 24h"
    assert s.due == datetime(2026, 12, 2, 2, 0, tzinfo=UTC) and s.overdue_s == 7200
    report = ScheduleReport("pg-boss", True, (s,), now)
    assert view.report_json(report, 7199)["schedules"][0]["late"] is True
    assert view.report_json(report, 7200)["schedules"][0]["late"] is False


def test_unknown_figures_are_null_with_a_reason_never_zero() -> None:
    now = datetime(2026, 12, 2, 4, 0, tzinfo=UTC)
    words_only = evaluate(row("every hour", None, now), now)  # Fugit's words: not a cron expression
    doc = view.schedule_json(words_only, 60)
    for name in ("words", "next_run", "due", "overdue_s", "period_s", "late"):
        assert doc[name] is None and "not a cron expression" in doc["reasons"][name], name
    never = evaluate(row("*/5 * * * *", None, None), now)  # no run, no creation time
    doc = view.schedule_json(never, 60)
    assert doc["last_run"] is None and doc["overdue_s"] is None and doc["late"] is None
    assert "nothing to count from" in doc["reasons"]["late"]
    assert doc["next_run"] == "2026-12-02T04:05:00+00:00"
    bad_zone = view.schedule_json(evaluate(row("* * * * *", "Mars/Olympus", now), now), 60)
    assert bad_zone["next_run"] is None and "unknown time zone" in bad_zone["reasons"]["next_run"]


def test_a_never_run_schedule_counts_from_its_creation() -> None:
    now = datetime(2026, 12, 2, 4, 0, tzinfo=UTC)
    s = evaluate(row("*/10 * * * *", None, None, created_at=now - timedelta(minutes=35)), now)
    assert s.due == datetime(2026, 12, 2, 3, 30, tzinfo=UTC) and s.overdue_s == 1800
    assert s.late_line() == "schedule nightly-report never ran since it was created 35m00s ago, due every 10m"


def test_six_fields_seconds_first_as_cron_parser_and_fugit_write_them() -> None:
    now = datetime(2026, 12, 2, 4, 0, 7, tzinfo=UTC)
    s = evaluate(row("*/15 * * * * *", None, now), now, seconds_first=True)
    assert s.next_run == datetime(2026, 12, 2, 4, 0, 15, tzinfo=UTC) and s.period_s == 15


def test_a_stored_next_run_is_the_frameworks() -> None:
    now = datetime(2026, 12, 2, 4, 0, tzinfo=UTC)
    stored = now - timedelta(minutes=3)  # pgqueuer's next_run, 3 minutes past: nobody picked it
    s = evaluate(row("* * * * *", "UTC", now - timedelta(minutes=4), next_run=stored), now)
    assert (s.next_run, s.next_source, s.due, s.overdue_s) == (stored, "framework", stored, 180.0)


def _snap(report: ScheduleReport) -> Snapshot:  # the sample Snapshot, carrying these schedules
    return make_snapshot(schedules=report)


def test_the_late_rule_names_the_schedule_and_the_stopped_scheduler() -> None:
    now = datetime(2026, 12, 2, 4, 0, tzinfo=UTC)
    late = evaluate(row("0 2 * * *", "UTC", now - timedelta(hours=26)), now)
    fine = evaluate({**row("*/5 * * * *", "UTC", now - timedelta(minutes=2)), "name": "often"}, now)
    report = ScheduleReport("pg-boss", True, (late, fine), now, pass_at=now - timedelta(minutes=10),
                            pass_name="pg-boss's cron pass (version.cron_on)")  # fmt: skip
    found = late_schedules([_snap(report)], Thresholds(schedule_late_s=600))
    assert [f.id for f in found] == ["schedule:nightly-report", "scheduler"]
    assert found[0].short == "schedule nightly-report last ran 26h ago, due every 24h"
    assert found[1].short == "pg-boss's cron pass (version.cron_on) last ran 10m00s ago"
    assert late_schedules([_snap(report)], Thresholds(schedule_late_s=7200)) == []


def test_solid_queue_recurring_tasks_with_their_next_run_and_jobs(
    empty_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    install(empty_dsn)
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        enqueue(conn, "reports", 1)
        job = conn.execute("SELECT max(id) FROM solid_queue_jobs").fetchone()[0]  # type: ignore[index]
        # RecurringTask rows as Solid Queue writes them from config/recurring.yml, and one run
        conn.execute(
            """
            INSERT INTO solid_queue_recurring_tasks (key, schedule, class_name, queue_name, static,
                                                     created_at, updated_at)
            VALUES ('hourly_report', '0 * * * *', 'ReportJob', 'reports', true, now() AT TIME ZONE 'UTC',
                    now() AT TIME ZONE 'UTC'),
                   ('ny_morning', '0 9 * * * America/New_York', 'MorningJob', NULL, true,
                    now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC'),
                   ('words', 'every hour', 'WordsJob', NULL, true, now() AT TIME ZONE 'UTC',
                    now() AT TIME ZONE 'UTC')
            """
        )
        conn.execute(
            "INSERT INTO solid_queue_recurring_executions (job_id, task_key, run_at, created_at) VALUES"
            " (%s, 'hourly_report', date_trunc('hour', now() AT TIME ZONE 'UTC'), now() AT TIME ZONE 'UTC')",
            (job,),
        )
    code, out, err = cli(capsys, "schedules", "--dsn", empty_dsn, "--kind", "solid-queue", "--json")
    assert (code, err) == (0, ""), err
    doc = json.loads(out)
    by = {s["name"]: s for s in doc["schedules"]}
    now = datetime.fromisoformat(doc["as_of"])
    hourly = by["hourly_report"]
    hour = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    assert datetime.fromisoformat(hourly["last_run"]) == hour
    assert datetime.fromisoformat(hourly["next_run"]) == hour + timedelta(hours=1)
    assert hourly["words"] == "Every hour" and hourly["late"] is False
    assert [(j["id"], j["state"], j["link"]) for j in hourly["jobs"]] == [(str(job), "ready", "exact")]
    morning = by["ny_morning"]
    ny = datetime.fromisoformat(morning["next_run"]).astimezone(ZoneInfo("America/New_York"))
    assert (ny.hour, ny.minute) == (9, 0) and morning["timezone"] == "America/New_York"
    assert morning["last_run"] is None and morning["reasons"]["last_run"].startswith("no run recorded")
    assert by["words"]["next_run"] is None and "not a cron expression" in by["words"]["reasons"]["next_run"]
    code, out, err = cli(capsys, "schedules", "--dsn", empty_dsn, "--kind", "solid-queue")
    assert code == 0 and "hourly_report" in out and "Every hour" in out and "in " in out


def test_oban_cron_jobs_by_their_meta(empty_dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Oban.Cron writes each occurrence's job with meta cron, cron_expr, cron_name, cron_tz
    (lib/oban/cron.ex): the newest one per cron_name gives the schedule; a plain job is not one."""
    from dialect_cases.oban import connect, install_schema
    from dialect_cases.oban import insert as insert_jobs

    install_schema(empty_dsn, "public")
    with connect(empty_dsn, "public") as conn:
        insert_jobs(conn, "default", 3)  # not cron jobs
        conn.execute(
            """
            INSERT INTO oban_jobs (state, queue, worker, args, meta, inserted_at, scheduled_at)
            SELECT 'completed', 'reports', 'MyApp.Nightly', '{}',
                   jsonb_build_object('cron', true, 'cron_expr', '@daily', 'cron_name', 'MyApp.Nightly',
                                      'cron_tz', 'America/Chicago'),
                   t, t
            FROM (SELECT timezone('UTC', now()) - make_interval(days => d) AS t
                  FROM generate_series(1, 3) d) x
            """
        )
    code, out, err = cli(capsys, "schedules", "--dsn", empty_dsn, "--kind", "oban", "--json")
    assert (code, err) == (0, ""), err
    doc = json.loads(out)
    (s,) = doc["schedules"]
    assert (s["name"], s["expression"], s["timezone"], s["queue"]) == (
        "MyApp.Nightly", "@daily", "America/Chicago", "reports"
    )  # fmt: skip
    now = datetime.fromisoformat(doc["as_of"])
    assert abs((now - datetime.fromisoformat(s["last_run"])).total_seconds() - 86400) < 60
    chicago = datetime.fromisoformat(s["next_run"]).astimezone(ZoneInfo("America/Chicago"))
    assert (chicago.hour, chicago.minute) == (0, 0) and s["period_s"] == 86400
    assert [j["state"] for j in s["jobs"]] == ["done"] * 3 and {j["link"] for j in s["jobs"]} == {"exact"}


def test_a_snapshot_keeps_its_schedules_through_json() -> None:
    """Recordings and `snapshot --json` carry the report; replay and `why --from` read it back."""
    now = datetime(2026, 12, 2, 4, 0, tzinfo=UTC)
    job = model.MadeJob("7", "done", "completed", now - timedelta(hours=2), now, "exact")
    s = evaluate(row("0 2 * * *", "Europe/Berlin", now - timedelta(hours=26)), now, jobs=[job])
    report = ScheduleReport("pg-boss", True, (s,), now, links="x", pass_at=now, pass_name="cron pass")
    back = Snapshot.from_dict(json.loads(json.dumps(_snap(report).to_dict())))
    assert back.schedules == report
    assert late_schedules([back], Thresholds(schedule_late_s=60))[0].short == s.late_line()


def test_a_kind_without_schedules_says_so(dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "schedules", "--dsn", dsn, "--json")
    assert (code, err) == (0, ""), err
    doc = json.loads(out)
    assert doc["supported"] is False and doc["schedules"] == []
    assert doc["reason"].endswith("keeps no periodic schedules in the database")
    code, out, err = cli(capsys, "schedules", "--dsn", dsn)
    assert code == 0 and out.rstrip().endswith("keeps no periodic schedules in the database")
    code, out, err = cli(capsys, "schedules", "--dsn", dsn, "--rows", "-1")
    assert code == 2 and err == "pgq-top: error: --rows wants 0 or more\n"
