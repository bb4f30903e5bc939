"""Demo keys on a real demo (embedded server, load, workers): the idle-in-tx control and `K` on it."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from actions_support import pgq_actions
from monitor_support import pgq_monitor
from test_tui_app import plain, settle

from pgq_tui.demo import DemoSession
from pgq_tui.tui.app import PgqTopApp
from pgq_tui.tui.screens.confirm import ConfirmScreen
from pgq_tui.tui.screens.help import HelpScreen


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoSession]:
    with DemoSession(workers=1, rate=20.0) as session:
        yield session


async def test_demo_keys_idle_transaction_then_terminate_it(demo: DemoSession) -> None:
    monitor, actions = pgq_monitor(demo.dsn), pgq_actions(demo.dsn)
    app = PgqTopApp(monitor, actions=actions, demo=demo.controller, interval=0.5)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot, app)
            assert "workers" in plain(app.query_one("#demo").content)
            await pilot.press("question_mark")
            assert "Crash a worker" in plain(app.screen.query_one("#help-body").content, width=100)
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("escape", "i")
            deadline = time.monotonic() + 10
            pid = None
            while pid is None:
                assert time.monotonic() < deadline, "idle-in-transaction session never showed"
                await pilot.pause(0.2)
                rows = app.panel("sessions")._panel_rows
                pid = next((r.target for k, r in rows.items() if k.startswith("i:")), None)
            sessions = app.panel("sessions")
            await pilot.press("5")
            deadline = time.monotonic() + 10
            while f"i:{pid}" not in sessions.rows:  # the table redraws on its next refresh
                assert time.monotonic() < deadline, "idle-in-transaction row never reached the table"
                await pilot.pause(0.1)
            sessions.move_cursor(row=sessions.get_row_index(f"i:{pid}"))
            await pilot.press("K")
            await pilot.pause(0.5)
            assert isinstance(app.screen, ConfirmScreen)
            await pilot.press("y")
            deadline = time.monotonic() + 10
            while f"i:{pid}" in sessions._panel_rows:
                assert time.monotonic() < deadline, "terminated session still listed"
                await pilot.pause(0.2)
    finally:
        actions.close()
        monitor.close()
