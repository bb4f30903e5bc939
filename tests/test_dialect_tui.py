"""The dashboard on a home-grown table: its panels through the dialect, unsupported ones said so, and
the r / R keys requeueing stuck jobs through the mapping's guarded SQL."""

from __future__ import annotations

import io

import psycopg
from dialect_cases.seed import (
    JOB_QUEUE,
    JOB_QUEUE_ADVISED,
    SEED_JOBS,
    SEED_JOBS_ADVISED,
    job_queue_populate,
    seed_jobs_populate,
)
from rich.console import Console
from tui_support import settle

from pgq_tui.actions import Actions
from pgq_tui.detection import find_queues
from pgq_tui.monitor.collect import Monitor
from pgq_tui.tui.app import PgqTopApp
from pgq_tui.tui.screens.confirm import ConfirmScreen
from pgq_tui.tui.screens.queue import extra_states


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


EXTRA_MAPPING = """
kind = "jobs-with-extras"
[table]
name = "jobs"
[columns]
id = "id"
queue = "queue"
status = "status"
run_at = "run_at"
lease = "locked_until"
[states]
ready = ["pending"]
running = ["running"]
done = ["done"]
extra = { cancelled = ["cancelled"], paused = ["paused"] }
[stuck]
rule = "lease"
"""


async def test_extra_states_show_in_the_queues_panel(empty_dsn: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A mapping's extra states: at 80 columns one shared column in place of the sparkline, spelled
    out in the border; with room, a column each."""
    mapping = tmp_path / "extras.toml"
    mapping.write_text(EXTRA_MAPPING)
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(SEED_JOBS)
        conn.execute(SEED_JOBS_ADVISED)
        conn.execute("CREATE INDEX jobs_parked_idx ON jobs (queue) WHERE status IN ('cancelled', 'paused')")
        seed_jobs_populate(empty_dsn)
        for queue, status, n in (("mail", "cancelled", 2), ("mail", "paused", 1), ("thumbs", "cancelled", 1)):
            conn.execute(
                "UPDATE jobs SET status = %s WHERE id IN (SELECT id FROM jobs WHERE queue = %s"
                " AND status = 'pending' ORDER BY id LIMIT %s)",
                (status, queue, n),
            )
    (target,) = find_queues(empty_dsn, kind="jobs-with-extras", mapping=str(mapping))
    for size, expected in (((80, 24), {"mail": "2c 1p", "thumbs": "1c"}), ((120, 32), None)):
        monitor = Monitor(empty_dsn, target.model)
        app = PgqTopApp(monitor, target=target.label, interval=1.0)
        try:
            async with app.run_test(size=size) as pilot:
                await settle(pilot, app)
                table = app.panel("queues")
                rows = {r.target: r for r in table._panel_rows.values()}
                if expected is not None:
                    assert "x:folded" in table.shown_keys and "trend" not in table.shown_keys
                    at = table.shown_keys.index("x:folded")
                    assert {q: rows[q].cells[at].plain for q in expected} == expected
                    assert "other: c cancelled p paused" in str(table.border_subtitle)
                else:
                    assert {"x:cancelled", "x:paused", "trend"} <= set(table.shown_keys)
                    cancelled, paused = (table.shown_keys.index(k) for k in ("x:cancelled", "x:paused"))
                    assert [rows["mail"].cells[i].plain for i in (cancelled, paused)] == ["2", "1"]
                    table.move_cursor(row=list(rows).index("mail"))
                    await pilot.press("v")  # the queue's detail lists them too, with how each was counted
                    await pilot.pause()
                    assert app.screen.query("#detail-extra")
                    console = Console(width=100, file=io.StringIO(), record=True)
                    mail = next(q for q in app.snapshot.queues if q.queue == "mail")
                    console.print(extra_states(app.snapshot, mail))
                    lines = [line.split()[:2] for line in console.export_text().splitlines()]
                    assert ["cancelled", "2"] in lines and ["paused", "1"] in lines
        finally:
            monitor.close()
