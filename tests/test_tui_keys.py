"""Keys that answer (#31): with --read-only a write key says why nothing happens and the health line
offers no write key; `q` quits from every screen (escape closes one), as in htop and k9s."""

from __future__ import annotations

import time

import psycopg
import pytest
from monitor_support import pgq_monitor
from test_diagnosis_server import FAST
from test_tui_app import dashboard, plain, settle
from textual.widgets import Input

from pgq_tui.queue import JobQueue
from pgq_tui.tui import keys
from pgq_tui.tui.app import PgqTopApp
from pgq_tui.tui.screens.help import HelpScreen
from pgq_tui.tui.screens.queue import QueueScreen
from pgq_tui.tui.screens.why import WhyScreen


def _notes(app: PgqTopApp) -> list[str]:
    return [n.message for n in app._notifications]


@pytest.mark.parametrize("key", sorted(keys.WRITE_KEYS))
async def test_a_write_key_in_read_only_says_writes_are_disabled(dsn: str, key: str) -> None:
    async with dashboard(dsn, size=(80, 24), read_only=True) as (app, pilot):
        await pilot.press(key)
        await pilot.pause()
        assert _notes(app) == [keys.READ_ONLY_REFUSAL]
        assert app.screen is app.screen_stack[0], "a write key opened something in read-only"


async def test_a_write_key_with_writes_on_is_not_refused(dsn: str) -> None:
    async with dashboard(dsn, size=(80, 24)) as (app, pilot):
        await pilot.press("R")
        await pilot.pause(0.5)
        assert keys.READ_ONLY_REFUSAL not in _notes(app)


async def test_read_only_health_line_offers_no_write_key_and_y_then_q_quits(dsn: str) -> None:
    holder = psycopg.connect(dsn)
    holder.execute("SELECT txid_current()")
    pid = holder.info.backend_pid
    monitor = pgq_monitor(dsn, read_only=True)
    app = PgqTopApp(monitor, interval=0.5, diagnosis=FAST, read_only=True)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            deadline = time.monotonic() + 90
            line = ""
            while f"pid {pid}" not in line:
                assert time.monotonic() < deadline, line
                await settle(pilot, app)
                line = plain(app.query_one("#verdict").content, 80).splitlines()[0]
            assert "· K" not in line and "terminate" in line, line
            await pilot.press("R")
            await pilot.pause()
            assert _notes(app) == [keys.READ_ONLY_REFUSAL]
            await pilot.press("y")
            await pilot.pause()
            assert isinstance(app.screen, WhyScreen)
            body = plain(app.screen.query_one("#why-body").content, 120)
            assert f"SELECT pg_terminate_backend({pid});" in body and "(key K" not in body
            await pilot.press("q")
            await pilot.pause()
            assert app.return_code == 0 and not app.is_running, "q on the why screen did not quit"
    finally:
        holder.close()
        monitor.close()


@pytest.mark.parametrize(
    ("opener", "screen"), [("y", WhyScreen), ("question_mark", HelpScreen), ("v", QueueScreen)]
)
async def test_escape_closes_a_screen_and_q_quits_from_it(dsn: str, opener: str, screen: type) -> None:
    with JobQueue(dsn) as q:
        q.enqueue("alpha", [{}])  # the queue screen needs a queue
    async with dashboard(dsn, size=(80, 24)) as (app, pilot):
        await pilot.press(opener)
        await pilot.pause()
        assert isinstance(app.screen, screen)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.screen_stack[0] and app.is_running
        await pilot.press(opener)
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


async def test_a_write_key_typed_into_the_filter_is_text_not_a_refusal(dsn: str) -> None:
    async with dashboard(dsn, size=(80, 24), read_only=True) as (app, pilot):
        await pilot.press("slash", "R", "K")
        await pilot.pause()
        assert app.query_one("#filter", Input).value == "RK"
        assert keys.READ_ONLY_REFUSAL not in _notes(app)
