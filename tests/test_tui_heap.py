"""The dashboard a user starts freezes its long-lived objects once its first screen is drawn, so the
cyclic collector's full passes no longer visit them (tui/heap.py), and gives them back when it
closes; an app built without asking (every test's) freezes nothing. Run in a child interpreter: a
freeze is process-wide, and this test's own process must not keep what it froze."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHILD = """
import asyncio, gc, sys
sys.path.insert(0, sys.argv[2])  # the tests folder: its support modules
from monitor_support import pgq_monitor
from pgq_tui.tui import heap
from pgq_tui.tui.app import PgqTopApp

async def frozen_after_first_screen(dsn, freeze):
    monitor = pgq_monitor(dsn, read_only=True)
    try:
        app = PgqTopApp(monitor, interval=5, read_only=True, freeze_heap=freeze)
        async with app.run_test(size=(120, 40)) as pilot:
            for _ in range(20):
                await pilot.pause(0.1)
            return gc.get_freeze_count()
    finally:
        monitor.close()

plain = asyncio.run(frozen_after_first_screen(sys.argv[1], False))
frozen = asyncio.run(frozen_after_first_screen(sys.argv[1], True))
heap.thaw()
print(plain, frozen, gc.get_freeze_count())
"""


def test_the_users_dashboard_freezes_its_long_lived_objects_and_thaws_them(dsn: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, dsn, str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.split()
    plain, frozen, thawed = (int(n) for n in out[-3:])
    assert plain == 0  # a test's app: nothing frozen
    assert frozen > 20_000  # the modules, textual's and rich's, the app and its widgets
    assert thawed == 0
