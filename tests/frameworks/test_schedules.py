"""Schedules on the frameworks' own clients: pg-boss 12's Node client schedules a job every minute
(its cron pass on), `pgq-top schedules` lists it with the right next run; once the client stops,
`why` reports it late within two periods and `check --schedule-late` goes WARNING (a real wait, no
backdating). pgqueuer's own scheduler registers its schedule, read with pgqueuer's next_run."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime, timedelta, timezone

import pytest
from dialect_support import cli

from pgq_tui.exitcodes import WHY_WARNING

from .harness import NODE_DIR, Processes, scalar, wait_for
from .pgboss_client import PgBoss12
from .pgqueuer_client import Pgqueuer, connect

NAME = "every-minute"
LATE_S = 20  # --schedule-late: past the due minute by this much


def _minute_after(t: datetime) -> datetime:
    return t.astimezone(timezone.utc).replace(second=0, microsecond=0) + timedelta(minutes=1)


def _schedules(capsys: pytest.CaptureFixture[str], dsn: str) -> dict:
    code, out, err = cli(capsys, "schedules", "--dsn", dsn, "--json", "--schedule-late", str(LATE_S))
    assert (code, err) == (0, ""), err
    return json.loads(out)


def test_pgboss12_schedule_listed_then_late_once_its_client_stops(
    framework_dsn: str, processes: Processes, capsys: pytest.CaptureFixture[str]
) -> None:
    PgBoss12.version()
    boss = PgBoss12(framework_dsn)
    boss.install()
    client = processes.start(
        "pgboss-cron",
        [boss.node, str(NODE_DIR / "pgboss.js"), "cron", json.dumps({"name": NAME, "cron": "* * * * *"})],
        ready="READY",
        **boss.env,
    )
    doc = _schedules(capsys, framework_dsn)
    (s,) = doc["schedules"]
    as_of = datetime.fromisoformat(doc["as_of"])
    assert (s["name"], s["expression"], s["timezone"], s["words"]) == (
        NAME,
        "* * * * *",
        "UTC",
        "Every minute",
    )
    assert datetime.fromisoformat(s["next_run"]) == _minute_after(as_of)
    assert s["period_s"] == 60 and s["late"] is False
    # the cron pass forwards the minute's occurrence, the send-it handler sends the job
    sent = "SELECT count(*) FROM pgboss.job WHERE name = %s"
    wait_for("the schedule's first job", lambda: scalar(framework_dsn, sent, (NAME,)) or None, timeout=90)
    doc = _schedules(capsys, framework_dsn)
    (s,) = doc["schedules"]
    assert s["last_run"] is not None and s["late"] is False and s["jobs"], s
    assert any(j["link"] == "exact" for j in s["jobs"])  # 12.38's last_job_id
    assert doc["scheduler"]["pass_age_s"] < 30
    client.stop()
    stopped = time.monotonic()

    def late() -> dict | None:
        code, out, _ = cli(
            capsys, "why", "--dsn", framework_dsn, "--window", "0.5", "--interval", "0.5",
            "--schedule-late", str(LATE_S), "--json",
        )  # fmt: skip
        doc = json.loads(out)
        chains = [c for q in doc["queues"] for c in q["chains"] if c["links"][0]["rule"] == "schedule_late"]
        return {"code": code, "chain": chains[0]} if chains else None

    found = wait_for("why to report the schedule late", late, timeout=150, every=5)
    assert time.monotonic() - stopped <= 120  # within two periods of the stop
    assert found["code"] == WHY_WARNING
    line = found["chain"]["links"][0]["short"]
    assert line.startswith(f"schedule {NAME} last ran ") and line.endswith(" ago, due every 1m"), line
    code, out, _ = cli(capsys, "check", "--dsn", framework_dsn, "--schedule-late", str(LATE_S))
    assert code == 1 and "WARNING" in out.split("|")[0], out
    assert f"schedule {NAME} last ran" in out
    doc = _schedules(capsys, framework_dsn)
    assert doc["schedules"][0]["late"] is True

    # its cause: pg-boss's cron pass (version.cron_on) silent for over 2 minutes, no instance running it
    def rooted() -> dict | None:
        got = late()
        return got if got and got["chain"]["root"] == "scheduler" else None

    found = wait_for("the stopped cron pass as the cause", rooted, timeout=120, every=5)
    assert "pg-boss's cron pass (version.cron_on) last ran" in found["chain"]["line"]


async def register_schedule(dsn: str, entrypoint: str, expression: str) -> None:
    """pgqueuer's SchedulerManager: the schedule decorator, then the insert its run() starts with."""
    from pgqueuer.db import AsyncpgDriver
    from pgqueuer.queries import Queries
    from pgqueuer.sm import SchedulerManager

    conn = await connect(dsn)
    try:
        sm = SchedulerManager(Queries(AsyncpgDriver(conn)))

        async def nightly(schedule: object) -> None:
            return None

        sm.schedule(entrypoint, expression)(nightly)
        await sm.queries.insert_schedule({k: v.next_in() for k, v in sm.registry.items()})
    finally:
        await conn.close()


def test_pgqueuer_schedule_with_its_own_next_run(
    framework_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    client = Pgqueuer(framework_dsn)
    client.version()
    client.install()
    asyncio.run(register_schedule(framework_dsn, "reports.nightly", "0 2 * * *"))
    code, out, err = cli(capsys, "schedules", "--dsn", framework_dsn, "--kind", "pgqueuer", "--json")
    assert (code, err) == (0, ""), err
    doc = json.loads(out)
    (s,) = doc["schedules"]
    stored = scalar(framework_dsn, "SELECT next_run FROM pgqueuer_schedules")
    assert s["queue"] == "reports.nightly" and s["expression"] == "0 2 * * *"
    assert datetime.fromisoformat(s["next_run"]) == stored and s["next_source"] == "framework"
    now = datetime.fromisoformat(doc["as_of"])
    two = now.astimezone(timezone.utc).replace(hour=2, minute=0, second=0, microsecond=0)
    due = two if two > now else two + timedelta(days=1)  # pgqueuer's croniter, in UTC
    assert abs((stored - due).total_seconds()) <= 1  # pgqueuer stores NOW() + delay, to the second
    assert s["late"] is False and s["jobs"] == [] and "makes no job row" in doc["links"]


def test_procrastinate_periodic_defers_give_the_last_run_and_the_job(
    framework_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """procrastinate's own PeriodicDeferrer defers the minute's occurrence (as its worker does): the
    last run is that minute, the job is linked exactly; the expression stays in the app's code."""
    import procrastinate
    from procrastinate.periodic import PeriodicDeferrer

    from .procrastinate_client import Procrastinate

    Procrastinate(framework_dsn).install()
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=framework_dsn))

    @app.periodic(cron="* * * * *")
    @app.task(name="tick")
    def tick(timestamp: int) -> None:
        return None

    async def defer() -> int:
        async with app.open_async():
            deferrer = PeriodicDeferrer(registry=app.periodic_registry, max_delay=600)
            jobs = list(deferrer.get_previous_tasks(at=time.time()))
            await deferrer.defer_jobs(jobs)
            return jobs[0][1]

    at = asyncio.run(defer())
    code, out, err = cli(capsys, "schedules", "--dsn", framework_dsn, "--kind", "procrastinate", "--json")
    assert (code, err) == (0, ""), err
    (s,) = json.loads(out)["schedules"]
    assert s["name"] == "tick" and datetime.fromisoformat(s["last_run"]).timestamp() == at
    assert s["expression"] is None and "@app.periodic" in s["reasons"]["expression"]
    assert s["next_run"] is None and s["late"] is None  # unknown, never "not late"
    assert [(j["state"], j["link"]) for j in s["jobs"]] == [("ready", "exact")]


def test_graphile_known_crontabs_with_the_crontab_file(
    framework_dsn: str, processes: Processes, capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    """Graphile Worker's own runner registers its crontab in _private_known_crontabs: the database
    holds the identifier and the last execution only; `--crontab FILE` supplies the expression."""
    from .graphile_client import Graphile
    from .harness import worker_env

    g = Graphile(framework_dsn)
    g.version()
    g.install()
    line = "*/5 * * * * fast ?id=five-minutes {}"
    processes.start(
        "graphile-cron",
        [g.node, str(NODE_DIR / "graphile.js"), "worker"],
        ready="READY",
        **worker_env(fixed=True, queues=["fast"]),
        PGQ_TEST_CRONTAB=line,
        **g.env,
    )
    known = "SELECT count(*) FROM graphile_worker._private_known_crontabs"
    wait_for("graphile to register its crontab", lambda: scalar(framework_dsn, known) or None)
    argv = ("schedules", "--dsn", framework_dsn, "--kind", "graphile-worker", "--json")
    code, out, err = cli(capsys, *argv)
    assert (code, err) == (0, ""), err
    (s,) = json.loads(out)["schedules"]
    assert s["name"] == "five-minutes" and s["expression"] is None and s["next_run"] is None
    assert "--crontab FILE" in s["reasons"]["expression"]
    crontab = tmp_path / "crontab"
    crontab.write_text(f"# the app's crontab\n{line}\n")
    code, out, err = cli(capsys, *argv, "--crontab", str(crontab))
    assert (code, err) == (0, ""), err
    doc = json.loads(out)
    (s,) = doc["schedules"]
    as_of = datetime.fromisoformat(doc["as_of"]).astimezone(timezone.utc)
    five = as_of.replace(minute=as_of.minute - as_of.minute % 5, second=0, microsecond=0) + timedelta(
        minutes=5
    )
    assert s["expression"] == "*/5 * * * *" and datetime.fromisoformat(s["next_run"]) == five
    assert s["words"] == "Every 5 minutes" and s["period_s"] == 300
    code, _, err = cli(capsys, *argv, "--crontab", str(tmp_path / "missing"))
    assert code == 2 and err.startswith("pgq-top: error: --crontab ") and "Traceback" not in err
