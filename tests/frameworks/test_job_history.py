"""Each job's history on River's real Go client (issue #33 item 3): a job that failed 3 times shows
its 3 attempts with their errors, newest first, in the job detail at 80x24 (the dead panel, Enter)."""

from __future__ import annotations

import json
import time

import psycopg

from pgq_tui.actions import Actions
from pgq_tui.detection import find_queues
from pgq_tui.monitor.collect import Monitor
from pgq_tui.tui.app import PgqTopApp
from pgq_tui.tui.screens.detail import DetailScreen

from .harness import Processes
from .river_client import River


def _fail_three_times(river: River, procs: Processes) -> int:
    """Client.Insert of a job with 3 attempts on the `fail` queue, worked by River's own client until
    River discards it. River's retry backoff (attempt^4 s) is waited out by moving a retryable job's
    scheduled_at to now; River's scheduler then makes it available (as it would at its time)."""
    spec = {"queue": "fail", "key": "thrice", "max_attempts": 3}
    job_id = int(river._run("insert", json.dumps(spec)).strip())
    river.start_worker(procs, fixed=False, queues=["fail"])
    table = f'"{river.schema}".river_job'
    deadline = time.monotonic() + 90
    with psycopg.connect(river.dsn, autocommit=True) as conn:
        while True:
            state = conn.execute(f"SELECT state::text FROM {table} WHERE id = %s", (job_id,)).fetchone()[0]
            if state == "discarded":
                return job_id
            assert time.monotonic() < deadline, f"River did not discard the job (state {state})"
            conn.execute(
                f"UPDATE {table} SET scheduled_at = now() WHERE id = %s AND state = 'retryable'", (job_id,)
            )
            time.sleep(0.3)


async def test_river_job_failed_three_times_shows_its_attempts_at_80x24(
    framework_dsn: str, processes: Processes
) -> None:
    river = River(framework_dsn)
    river.install()
    job_id = _fail_three_times(river, processes)
    processes.stop_all()
    (target,) = find_queues(framework_dsn)
    monitor, actions = Monitor(framework_dsn, target.model), Actions(framework_dsn, target.model)
    app = PgqTopApp(monitor, actions=actions, target=target.label, interval=1.0)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            deadline = time.monotonic() + 20
            while app.panel("dead").row_count < 1:
                assert time.monotonic() < deadline, "the dead job was not listed"
                await pilot.pause(0.1)
            await pilot.press("4", "enter")
            while not isinstance(app.screen, DetailScreen) or "attempts, newest" not in _screen(app):
                assert time.monotonic() < deadline, "the detail did not open"
                await pilot.pause(0.1)
            screen = _screen(app)
            assert app.screen.job_id == job_id
            # the three attempts, newest first, each with River's error, all on the 80x24 screen
            lines = [line for line in screen.splitlines() if "#" in line and " ago)" in line]
            assert [line.split("#", 1)[1].split()[0] for line in lines] == ["3", "2", "1"], screen
            assert screen.count("always fails: thrice") == 3, screen
            assert "errored" in screen
            print(screen)  # shown with -s: the detail as the operator sees it
    finally:
        actions.close()
        monitor.close()
    detail = Actions(framework_dsn, target.model)
    try:
        attempts = detail.job_detail(job_id)["history"]["attempts"]  # type: ignore[index]
    finally:
        detail.close()
    assert [a["attempt"] for a in attempts] == [3, 2, 1]
    assert all(a["error"] == "always fails: thrice" for a in attempts)
    assert all(a["trace"] is None for a in attempts)  # River keeps a trace for panics only ('' here)
    assert all(a["worker"] for a in attempts)  # attempted_by, one client id per attempt
    assert attempts[0]["at"] > attempts[1]["at"] > attempts[2]["at"]


def _screen(app: PgqTopApp) -> str:
    """What the 80x24 terminal shows now, line by line (Textual's compositor: only what is visible,
    not the scrolled-away part of the detail)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def test_procrastinate_wait_and_run_times_come_from_its_events(
    framework_dsn: str, processes: Processes
) -> None:
    """procrastinate's own worker runs jobs; the latency pass reads their deferred/started/succeeded
    events: as many jobs as succeeded, waits and runs within what the test's clock allows."""
    from pgq_tui.monitor.latency import queue_latency

    from .procrastinate_client import Procrastinate

    client = Procrastinate(framework_dsn)
    client.install()
    started = time.monotonic()
    for i in range(5):
        client.enqueue("fast", f"k{i}")
    client.start_worker(processes, fixed=True, queues=["fast"])
    deadline = time.monotonic() + 60
    with psycopg.connect(framework_dsn, autocommit=True) as conn:
        done = 0
        while done < 5:
            assert time.monotonic() < deadline, "procrastinate did not run the jobs"
            time.sleep(0.3)
            (done,) = conn.execute(
                "SELECT count(*) FROM procrastinate_jobs WHERE status = 'succeeded'"
            ).fetchone()
    elapsed = time.monotonic() - started
    (target,) = find_queues(framework_dsn)
    monitor = Monitor(framework_dsn, target.model)
    try:
        monitor.collect()
        assert monitor.settle(30)
        spans = queue_latency(monitor.collect(), "fast")
    finally:
        monitor.close()
    for span in ("5m", "1h"):
        s = spans[span]
        assert s.jobs == 5 and s.wait is not None and s.run is not None, s
        assert 0 <= (s.wait.p50 or 0) <= (s.wait.max or 0) <= elapsed
        assert 0 <= (s.run.p50 or 0) <= (s.run.max or 0) <= elapsed
