"""Helpers for the Textual pilot tests: waiting for the dashboard's snapshots."""

from __future__ import annotations

import time

from pgq_tui.tui.app import PgqTopApp


async def settle(pilot, app: PgqTopApp, polls: int = 1, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    """Wait until `polls` more snapshots have been rendered (fails after `timeout` seconds)."""
    target = app.received + polls
    deadline = time.monotonic() + timeout
    while app.received < target:
        assert time.monotonic() < deadline, "no snapshot arrived"
        await pilot.pause(0.05)
    await pilot.pause()
