"""The dashboard on a home-grown table: its panels through the dialect, unsupported ones said so, and
the r / R keys requeueing stuck jobs through the mapping's guarded SQL."""

from __future__ import annotations

import time

import psycopg
from dialect_cases.seed import (
    JOB_QUEUE,
    JOB_QUEUE_ADVISED,
    SEED_JOBS,
    SEED_JOBS_ADVISED,
    job_queue_populate,
    seed_jobs_populate,
)

from pgq_tui.actions import Actions
from pgq_tui.detection import find_queues
from pgq_tui.monitor.collect import Monitor
from pgq_tui.tui.app import PgqTopApp
from pgq_tui.tui.screens.confirm import ConfirmScreen


async def settle(pilot, app: PgqTopApp, polls: int = 1, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    target = app.received + polls
    deadline = time.monotonic() + timeout
    while app.received < target:
        assert time.monotonic() < deadline, "no snapshot arrived"
        await pilot.pause(0.05)
    await pilot.pause()


def _app(dsn: str) -> tuple[PgqTopApp, Monitor, Actions]:
    (target,) = find_queues(dsn)
    monitor = Monitor(dsn, target.model)
    actions = Actions(dsn, target.model)
    return PgqTopApp(monitor, actions=actions, target=target.label, interval=1.0), monitor, actions


async def test_r_requeues_a_stuck_job_of_the_seed_table(empty_dsn: str) -> None:
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(SEED_JOBS)
        conn.execute(SEED_JOBS_ADVISED)
        seed_jobs_populate(empty_dsn)
        app, monitor, actions = _app(empty_dsn)
        try:
            async with app.run_test(size=(160, 48)) as pilot:
                await settle(pilot, app)
                assert app.panel("stuck").border_title.startswith("2 Stuck jobs (2)")
                assert "unsupported" in str(app.panel("dead").border_title)
                await pilot.press("2", "r")
                await pilot.pause(0.5)
                assert isinstance(app.screen, ConfirmScreen)
                await pilot.press("y")
                await settle(pilot, app)
                assert conn.execute("SELECT count(*) FROM jobs WHERE locked_until < now()").fetchone()[0] == 1
                await pilot.press("R")
                await pilot.pause(0.5)
                assert isinstance(app.screen, ConfirmScreen)
                await pilot.press("y")
                await settle(pilot, app)
                assert conn.execute("SELECT count(*) FROM jobs WHERE locked_until < now()").fetchone()[0] == 0
                assert conn.execute("SELECT count(*) FROM jobs WHERE status = 'running'").fetchone()[0] == 2
        finally:
            actions.close()
            monitor.close()


async def test_the_job_queue_shape_in_read_only_mode_refuses_writes(empty_dsn: str) -> None:
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(JOB_QUEUE)
        conn.execute(JOB_QUEUE_ADVISED)
        job_queue_populate(empty_dsn)
        (target,) = find_queues(empty_dsn)
        monitor = Monitor(empty_dsn, target.model, read_only=True)
        actions = Actions(empty_dsn, target.model, read_only=True)
        app = PgqTopApp(monitor, actions=actions, target=target.label, interval=1.0, read_only=True)
        try:
            async with app.run_test(size=(160, 48)) as pilot:
                await settle(pilot, app)
                assert app.panel("stuck").border_title.startswith("2 Stuck jobs (1)")
                await pilot.press("2", "r")
                await pilot.pause(0.5)
                assert not isinstance(app.screen, ConfirmScreen)
                assert (
                    conn.execute("SELECT count(*) FROM job_queue WHERE worker_id = 'w-crashed'").fetchone()[0]
                    == 1
                )
        finally:
            actions.close()
            monitor.close()
