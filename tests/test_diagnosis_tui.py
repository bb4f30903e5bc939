"""The diagnosis on the dashboard: at 80x24 the health line names the root cause and its key, `y`
opens the why screen with the evidence and the SQL; untrusted text stays literal."""

from __future__ import annotations

import time

import psycopg
from monitor_support import pgq_monitor
from test_diagnosis_server import FAST
from test_tui_app import plain, settle
from test_tui_sample import HOSTILE, make_snapshot

from pgq_tui.tui.app import PgqTopApp
from pgq_tui.tui.screens.why import WhyScreen, why_renderable
from pgq_tui.tui.widgets.status import chain_text


def test_hostile_application_name_is_literal_in_the_line_and_the_screen() -> None:
    from pgq_tui.diagnosis import diagnose

    chains = diagnose([make_snapshot()])  # the sample: an idle session named HOSTILE, a lock, crashes
    line = chain_text(chains, 72)
    assert len(line.plain) <= 72 and "\x1b" not in line.plain
    body = plain(why_renderable(chains), 200)
    # the idle session's application name (HOSTILE): shown literally, its escape written out
    assert "[bold red]pwned[/]" in body and "\\e[31m" in body and "\x1b" not in body
    assert "SELECT pg_terminate_backend(5001);" in body and "requeue --stuck" in body
    assert "nothing wrong" in plain(why_renderable([]))


async def test_idle_transaction_on_the_health_line_at_80x24(dsn: str) -> None:
    holder = psycopg.connect(dsn, application_name=HOSTILE[:40])
    holder.execute("SELECT txid_current()")
    pid = holder.info.backend_pid
    monitor = pgq_monitor(dsn)
    app = PgqTopApp(monitor, interval=0.5, diagnosis=FAST)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            deadline = time.monotonic() + 90
            line = ""
            while f"pid {pid}" not in line:
                assert time.monotonic() < deadline, line
                await settle(pilot, app)
                line = plain(app.query_one("#verdict").content, 80).splitlines()[0]
            assert line.startswith("health: ") and "· K" in line and len(line.rstrip()) <= 80
            await pilot.press("y")
            await pilot.pause()
            assert isinstance(app.screen, WhyScreen)
            body = plain(app.screen.query_one("#why-body").content, 120)
            assert f"SELECT pg_terminate_backend({pid});" in body and "(key K on the dashboard)" in body
            assert "[bold red]pwned[/]" in body  # the application name, literally
            await pilot.press("escape")
            holder.commit()
            await settle(pilot, app, polls=2)
            assert f"pid {pid}" not in plain(app.query_one("#verdict").content, 80)
    finally:
        holder.close()
        monitor.close()
