"""Render the dashboard on a busy demo queue and save SVG screenshots into screenshots/.

    python scripts/screenshots.py [--out screenshots]

Starts a private demo (embedded PostgreSQL, load generator, worker pool), makes it interesting (more
load, an idle-in-transaction session pinning the xmin horizon, a worker killed mid-lease so stuck
jobs appear), then lets the app render itself at 80x24 and 160x48 via `App.save_screenshot`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from pgq_tui.actions import Actions
from pgq_tui.demo import DemoSession
from pgq_tui.monitor.collect import Monitor
from pgq_tui.tui.app import PgqTopApp

SHOTS: list[tuple[str, tuple[int, int], list[str]]] = [
    ("dashboard-80x24", (80, 24), []),
    ("dashboard-160x48", (160, 48), []),
    ("sessions-80x24", (80, 24), ["5"]),
    ("requeue-confirm-80x24", (80, 24), ["2", "space", "r"]),
    ("advisor-160x48", (160, 48), ["A"]),
]


async def shoot(session: DemoSession, out: Path, name: str, size: tuple[int, int], press: list[str]) -> None:
    controller = session.controller
    monitor = Monitor(session.dsn, probe_interval_s=1.0)  # a few claim-cost probes in 3 polls
    actions = Actions(session.dsn)
    app = PgqTopApp(monitor, actions=actions, demo=controller, interval=1.0)
    try:
        async with app.run_test(size=size) as pilot:
            deadline = time.monotonic() + 15
            while app.received < 3 and time.monotonic() < deadline:  # rates need a few polls
                await pilot.pause(0.2)
            for key in press:
                await pilot.press(key)
                await pilot.pause(0.3)
            await pilot.pause(0.5)
            app.save_screenshot(filename=f"{name}.svg", path=str(out))
            print(f"saved {out / (name + '.svg')}", file=sys.stderr)
    finally:
        actions.close()
        monitor.close()


def wait_for_stuck_jobs(session: DemoSession, timeout: float = 60) -> int:
    """Crash workers until the monitor sees expired leases (a crash can hit a worker holding none)."""
    controller = session.controller
    deadline = time.monotonic() + timeout
    with Monitor(session.dsn) as monitor:
        while time.monotonic() < deadline:
            controller.crash_worker()
            controller.add_worker()
            time.sleep(controller.lease + 1)
            expired = monitor.collect().expired.total
            if expired:
                return expired
    raise SystemExit("no stuck jobs appeared: the screenshots would not show the stuck-job panels")


async def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    print("starting the demo…", file=sys.stderr)
    # The reaper is held off so the stuck jobs we make stay on screen for every shot.
    with DemoSession(reap_interval=600) as session:
        c = session.controller
        assert c is not None
        c.raise_load()
        c.raise_load()
        c.open_idle_transaction()
        time.sleep(8)  # history for the chart and sparklines, dead tuples behind the xmin holder
        print(f"{wait_for_stuck_jobs(session)} stuck jobs", file=sys.stderr)
        for name, size, press in SHOTS:
            await shoot(session, out, name, size, press)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "screenshots")
    asyncio.run(main(parser.parse_args().out))
