"""The dashboard against a real server, driven by keys through Textual's Pilot."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
from actions_support import pgq_actions, pgq_model
from monitor_support import pgq_monitor
from psycopg.conninfo import make_conninfo
from rich.console import Console
from tui_support import settle

from pgq_tui.actions import Actions
from pgq_tui.errors import PgqError
from pgq_tui.queue import JobQueue
from pgq_tui.tui import keys
from pgq_tui.tui.app import PgqTopApp
from pgq_tui.tui.screens.confirm import ConfirmScreen
from pgq_tui.tui.screens.detail import DetailScreen
from pgq_tui.tui.screens.help import HelpScreen
from pgq_tui.tui.widgets.status import Banner
from pgq_tui.tui.widgets.table import PanelTable

HOSTILE = "[bold red]pwned[/] \x1b[31mred"


def plain(renderable: object, width: int = 120) -> str:
    console = Console(width=width, record=True, color_system=None, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_text()


def cells(table: PanelTable) -> list[list[str]]:
    return [[str(getattr(c, "plain", c)) for c in table.get_row_at(i)] for i in range(table.row_count)]


@asynccontextmanager
async def dashboard(dsn: str, *, size=(160, 48), read_only=False, interval=1.0) -> AsyncIterator:  # type: ignore[no-untyped-def]
    monitor = pgq_monitor(dsn, read_only=read_only)
    actions = pgq_actions(dsn, read_only=read_only)
    app = PgqTopApp(monitor, actions=actions, interval=interval, read_only=read_only)
    try:
        async with app.run_test(size=size) as pilot:
            await settle(pilot, app)
            yield app, pilot
    finally:
        actions.close()
        monitor.close()


def seed_stuck(dsn: str, queue: str = "alpha", n: int = 2, payload: object = None) -> list[int]:
    """Jobs claimed by a worker that then vanished: expired lease, holder gone."""
    with JobQueue(dsn) as q:
        q.enqueue(queue, [payload if payload is not None else {"n": i} for i in range(n)])
        jobs = q.claim(queue, limit=n, lease=0.01)
    time.sleep(0.05)
    return [j.id for j in jobs]


async def test_panels_show_the_right_numbers(dsn: str, queue: JobQueue) -> None:
    queue.enqueue("alpha", [{"i": i} for i in range(5)])
    queue.enqueue("beta", [{"i": i} for i in range(3)])
    dead = queue.enqueue("beta", [{"doomed": True}], max_attempts=1)
    job = queue.claim("beta", limit=10)
    for j in job:
        if j.id == dead[0]:
            queue.fail(j, "boom")
        else:
            queue.release([j])
    stuck = seed_stuck(dsn, "alpha", 2)
    async with dashboard(dsn) as (app, _pilot):
        rows = {r[0]: r for r in cells(app.panel("queues"))}
        assert rows["alpha"][1:6] == ["5", "0", "0", "2", "0"]  # ready, sched, run, stuck, dead
        assert rows["beta"][1] == "3" and rows["beta"][5] == "1"
        assert sorted(int(r[1]) for r in cells(app.panel("stuck"))) == sorted(stuck)
        assert [r[1] for r in cells(app.panel("dead"))] == [str(dead[0])]
        assert "boom" in cells(app.panel("dead"))[0][-1]
        assert "stuck" in plain(app.query_one("#verdict").content)


async def test_enter_opens_detail_with_hostile_payload_shown_literally(dsn: str) -> None:
    [job_id] = seed_stuck(dsn, n=1, payload={"note": HOSTILE})
    async with dashboard(dsn, size=(80, 24)) as (app, pilot):
        await pilot.press("2", "enter")
        await pilot.pause(0.5)
        assert isinstance(app.screen, DetailScreen) and app.screen.job_id == job_id
        body = app.screen.query_one("#detail-body").content
        text = plain(body)
        assert "[bold red]pwned[/]" in text  # markup shown, not obeyed
        assert "\x1b" not in text and "\\u001b[31mred" in text  # the escape byte is visible, not live
        await pilot.press("escape")
        assert not isinstance(app.screen, DetailScreen)


async def test_filter_narrows_the_tables(dsn: str, queue: JobQueue) -> None:
    queue.enqueue("alpha", [{}])
    queue.enqueue("beta", [{}])
    async with dashboard(dsn) as (app, pilot):
        assert app.panel("queues").row_count == 2
        await pilot.press("slash", *"bet")
        await pilot.pause()
        assert [r[0] for r in cells(app.panel("queues"))] == ["beta"]
        await pilot.press("enter")  # keeps the filter, back to the panels
        assert app.filter_text == "bet"
        await pilot.press("escape")  # clears it
        await pilot.pause()
        assert app.panel("queues").row_count == 2


async def test_help_lists_every_binding(dsn: str) -> None:
    async with dashboard(dsn) as (app, pilot):
        expected = [b for b in app.BINDINGS if app.check_action(b.action, ()) and keys.section(b)]
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = plain(app.screen.query_one("#help-body").content, width=100)
        for binding in expected:
            assert binding.description in text, binding
        for key in ("?", "/", "space", "r", "R", "t", "D", "C", "K", "1", "7"):
            assert f"\n {key} " in "\n" + text or f" {key} " in text, key
        assert "Add worker" not in text  # demo keys only with --demo


async def test_pause_stops_polling(dsn: str) -> None:
    async with dashboard(dsn, interval=0.2) as (app, pilot):
        await settle(pilot, app, polls=2)
        await pilot.press("p")
        await pilot.pause(0.3)  # let a poll in flight land
        before = app.collects
        await asyncio.sleep(1.0)
        await pilot.pause()
        assert app.collects == before
        await pilot.press("p")
        await settle(pilot, app)


async def test_requeue_stuck_jobs_with_r_and_reap_with_shift_r(dsn: str, sql: psycopg.Connection) -> None:
    ids = seed_stuck(dsn, n=3)
    async with dashboard(dsn) as (app, pilot):
        await pilot.press("2", "space", "r")
        await pilot.pause(0.5)
        assert isinstance(app.screen, ConfirmScreen)
        assert "SELECT" in plain(app.screen.query_one("#confirm-body").content).upper()
        await pilot.press("y")
        await settle(pilot, app)
        status = dict(sql.execute("SELECT id, status FROM jobs").fetchall())
        assert sorted(status.values()) == ["pending", "running", "running"]
        assert app.panel("stuck").row_count == 2
        await pilot.press("R")
        await pilot.pause(0.5)
        await pilot.press("n")  # abort: nothing changes
        await pilot.pause(0.2)
        assert sql.execute("SELECT count(*) FROM jobs WHERE status = 'running'").fetchone()[0] == 2
        await pilot.press("R")
        await pilot.pause(0.5)
        await pilot.press("y")
        await settle(pilot, app)
        assert {s for (s,) in sql.execute("SELECT status FROM jobs WHERE id = ANY(%s)", (ids,))} == {
            "pending"
        }
        assert app.panel("stuck").row_count == 0


async def test_requeue_of_a_live_holder_needs_a_second_explicit_yes(
    dsn: str, queue: JobQueue, sql: psycopg.Connection
) -> None:
    queue.enqueue("alpha", [{"n": 1}])
    [job] = queue.claim("alpha", limit=1, lease=0.01)  # `queue`'s session (the holder) stays connected
    time.sleep(0.05)
    async with dashboard(dsn) as (app, pilot):
        assert "alive" in cells(app.panel("stuck"))[0][5]
        await pilot.press("2", "r")
        await pilot.pause(0.5)
        await pilot.press("y")
        await pilot.pause(0.3)
        assert isinstance(app.screen, ConfirmScreen) and app.screen.second
        await pilot.press("enter")  # not enough on the second confirmation
        await pilot.pause(0.2)
        assert isinstance(app.screen, ConfirmScreen)
        assert sql.execute("SELECT status FROM jobs WHERE id = %s", (job.id,)).fetchone()[0] == "running"
        await pilot.press("y")
        await settle(pilot, app)
        assert sql.execute("SELECT status FROM jobs WHERE id = %s", (job.id,)).fetchone()[0] == "pending"


async def test_terminate_an_idle_in_transaction_session_with_k(dsn: str, sql: psycopg.Connection) -> None:
    idle = psycopg.connect(dsn, application_name="test idle-tx")
    idle.execute("SELECT txid_current()")  # a transaction now left open
    pid = idle.info.backend_pid
    try:
        async with dashboard(dsn) as (app, pilot):
            await pilot.press("5")
            sessions = app.panel("sessions")
            keys_ = [r.key for r in sessions._panel_rows.values() if r.target == pid]
            assert keys_, "idle-in-transaction session not listed"
            sessions.move_cursor(row=sessions.get_row_index(keys_[0]))
            await pilot.press("K")
            await pilot.pause(0.5)
            assert isinstance(app.screen, ConfirmScreen)
            await pilot.press("y")
            await settle(pilot, app)
            await pilot.pause(0.3)
            await settle(pilot, app)
            gone = sql.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()[0]
            assert gone == 0
            assert all(r.target != pid for r in sessions._panel_rows.values())
    finally:
        idle.close()


async def test_read_only_has_no_write_bindings(dsn: str) -> None:
    async with dashboard(dsn, read_only=True) as (app, pilot):
        active = {ab.binding.action for ab in app.screen.active_bindings.values()}
        assert not active & keys.WRITE_ACTIONS
        await pilot.press("R")  # nothing opens
        await pilot.pause(0.3)
        assert not isinstance(app.screen, ConfirmScreen)
        assert "READ-ONLY" in plain(app.query_one("#header").content)


async def test_disconnect_shows_banner_and_recovers(dsn: str, server_dsn: str) -> None:
    dbname = psycopg.conninfo.conninfo_to_dict(dsn)["dbname"]
    ident = psycopg.sql.Identifier(str(dbname))
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        async with dashboard(dsn, interval=0.3) as (app, pilot):
            # The server refuses this database and drops our sessions: a real disconnect that lasts.
            admin.execute(psycopg.sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(ident))
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (dbname,)
            )
            deadline = time.monotonic() + 10
            while app.connected is not False:
                assert time.monotonic() < deadline, "the dashboard never noticed"
                await pilot.pause(0.1)
            banner = app.query_one(Banner)
            assert banner.display and "disconnected" in plain(banner.content)
            assert app.snapshot is not None  # the last data is kept, marked stale
            assert app.query_one("#grid").has_class("-stale")
            admin.execute(psycopg.sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS true").format(ident))
            await settle(pilot, app)
            assert app.connected is True and not banner.display


async def test_a_collect_error_is_a_banner_not_a_crash() -> None:
    def broken():  # type: ignore[no-untyped-def]
        raise PgqError("cannot connect to PostgreSQL: connection refused")

    app = PgqTopApp(broken, interval=0.2)
    async with app.run_test(size=(40, 12)) as pilot:  # also: the smallest supported terminal
        await pilot.pause(0.5)
        assert app.connected is False
        assert "connection refused" in plain(app.query_one(Banner).content)


async def test_a_role_without_privileges_gets_a_message_not_a_crash(
    dsn: str, sql: psycopg.Connection
) -> None:
    role = f"pgq_weak_{uuid.uuid4().hex[:8]}"
    ident = psycopg.sql.Identifier(role)
    sql.execute(psycopg.sql.SQL("CREATE ROLE {} NOLOGIN").format(ident))
    sql.execute(psycopg.sql.SQL("GRANT SELECT ON jobs TO {}").format(ident))
    seed_stuck(dsn, n=1)
    monitor = pgq_monitor(dsn)
    weak = Actions(make_conninfo(dsn, options=f"-c role={role}"), pgq_model(dsn))
    app = PgqTopApp(monitor, actions=weak, interval=5)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot, app)
            await pilot.press("2", "r")
            deadline = time.monotonic() + 5
            while not list(app._notifications):
                assert time.monotonic() < deadline, "no message"
                await pilot.pause(0.1)
            [note] = list(app._notifications)
            assert note.severity == "warning" and "GRANT SELECT, UPDATE" in note.message
            assert not isinstance(app.screen, ConfirmScreen)  # refused: nothing to confirm
            assert sql.execute("SELECT status FROM jobs").fetchone()[0] == "running"
    finally:
        weak.close()
        monitor.close()
        sql.execute(psycopg.sql.SQL("REVOKE ALL ON jobs FROM {}").format(ident))
        sql.execute(psycopg.sql.SQL("DROP ROLE {}").format(ident))


async def test_retry_with_t_and_discard_with_shift_d(
    dsn: str, queue: JobQueue, sql: psycopg.Connection
) -> None:
    ids = queue.enqueue("alpha", [{"n": i} for i in range(2)], max_attempts=1)
    for job in queue.claim("alpha", limit=2):
        queue.fail(job, f"boom {job.id}")
    async with dashboard(dsn) as (app, pilot):
        assert sorted(int(r[1]) for r in cells(app.panel("dead"))) == sorted(ids)
        await pilot.press("4", "space", "t")  # mark the first row (the cursor moves on), retry it
        await pilot.pause(0.5)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(pilot, app)
        await pilot.press("D")  # the cursor row: the other dead job
        await pilot.pause(0.5)
        assert isinstance(app.screen, ConfirmScreen) and app.screen.plan.destructive
        await pilot.press("enter")
        await settle(pilot, app)
        rows = sql.execute("SELECT status, count(*) FROM jobs GROUP BY 1").fetchall()
        assert dict(rows) == {"pending": 1}  # one retried; the discarded one is gone
        assert app.panel("dead").row_count == 0


async def test_enter_on_a_queue_selects_exactly_that_queue(dsn: str, sql: psycopg.Connection) -> None:
    """Enter on `mail` shows mail only, not mail_bulk (a substring match did): marking every stuck row
    it shows and requeueing them touches only mail's jobs."""
    mail = seed_stuck(dsn, "mail", n=2)
    bulk = seed_stuck(dsn, "mail_bulk", n=3)
    async with dashboard(dsn) as (app, pilot):
        queues = app.panel("queues")
        names = [r[0] for r in cells(queues)]
        assert sorted(names) == ["mail", "mail_bulk"]
        await pilot.press("1")
        queues.move_cursor(row=names.index("mail"))
        await pilot.press("enter")
        await pilot.pause()
        assert app.filter_text == "queue:mail"
        assert [r[0] for r in cells(queues)] == ["mail"]
        stuck = app.panel("stuck")
        assert sorted(int(r[1]) for r in cells(stuck)) == sorted(mail)
        await pilot.press("2", *["space"] * stuck.row_count, "r")
        await pilot.pause(0.5)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(pilot, app)
        status = dict(sql.execute("SELECT id, status FROM jobs").fetchall())
        assert {status[i] for i in mail} == {"pending"} and {status[i] for i in bulk} == {"running"}
        await pilot.press("1", "enter")  # enter again: every queue
        await pilot.pause()
        assert app.filter_text == "" and app.panel("queues").row_count == 2
