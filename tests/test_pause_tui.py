"""The dashboard's P and U keys at 80x24 on pgq-top's own queue: confirmed, the queue row then says
`paused` in its wait column (and the subtitle how to resume), U resumes it; under --read-only the keys
do not exist."""

from __future__ import annotations

from rich.text import Text
from test_dialect_tui import settle

from pgq_tui.actions import Actions
from pgq_tui.detection import find_queues
from pgq_tui.monitor.collect import Monitor
from pgq_tui.queue import JobQueue
from pgq_tui.tui.app import PgqTopApp
from pgq_tui.tui.screens.confirm import ConfirmScreen


def _wait_cell(app: PgqTopApp, queue: str) -> str:
    table = app.panel("queues")
    cells = table.get_row(f"q:{queue}")
    index = list(table.shown_keys).index("wait")
    cell = cells[index]
    return cell.plain if isinstance(cell, Text) else str(cell)


async def test_p_pauses_and_u_resumes_the_queue_under_the_cursor(dsn: str, queue: JobQueue) -> None:
    queue.enqueue("alpha", [{}])
    queue.enqueue("mail", [{}, {}])
    (target,) = find_queues(dsn)
    monitor, actions = Monitor(dsn, target.model), Actions(dsn, target.model)
    app = PgqTopApp(monitor, actions=actions, target=target.label, interval=1.0)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot, app)
            assert _wait_cell(app, "mail") != "paused"
            await pilot.press("1", "down", "P")  # alpha, then mail
            await pilot.pause(0.5)
            assert isinstance(app.screen, ConfirmScreen)
            assert "Pause queue 'mail'" in str(app.screen.plan.title)
            await pilot.press("y")
            await settle(pilot, app, polls=2)
            assert queue.paused().keys() == {"mail"}
            assert _wait_cell(app, "mail") == "paused" and _wait_cell(app, "alpha") != "paused"
            assert "U resumes" in str(app.panel("queues").border_subtitle)
            await pilot.press("U")
            await pilot.pause(0.5)
            assert isinstance(app.screen, ConfirmScreen)
            await pilot.press("y")
            await settle(pilot, app, polls=2)
            assert queue.paused() == {}
            assert _wait_cell(app, "mail") != "paused"
    finally:
        actions.close()
        monitor.close()


async def test_the_pause_keys_are_absent_under_read_only(dsn: str, queue: JobQueue) -> None:
    queue.enqueue("mail", [{}])
    (target,) = find_queues(dsn)
    monitor = Monitor(dsn, target.model, read_only=True)
    actions = Actions(dsn, target.model, read_only=True)
    app = PgqTopApp(monitor, actions=actions, target=target.label, interval=1.0, read_only=True)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot, app)
            await pilot.press("1", "P")
            await pilot.pause(0.5)
            assert not isinstance(app.screen, ConfirmScreen)
            assert queue.paused() == {}
    finally:
        actions.close()
        monitor.close()
