"""A 5 MB payload: the queue stores it, the dashboard lists the job and opens its detail without hanging,
and the text shown is cut to something a terminal can hold."""

from __future__ import annotations

import time

from test_tui_app import cells, dashboard, plain, seed_stuck

from pgq_tui.tui.screens.detail import DetailScreen

BIG = {"blob": "x" * 5_000_000, "tail": "[bold red]still text[/] \x1b[31m"}


async def test_five_megabyte_payload_is_listed_and_detailed(dsn: str) -> None:
    [job_id] = seed_stuck(dsn, n=1, payload=BIG)
    async with dashboard(dsn, size=(80, 24)) as (app, pilot):
        started = time.monotonic()
        await pilot.press("2", "enter")
        deadline = time.monotonic() + 10
        while not isinstance(app.screen, DetailScreen):
            assert time.monotonic() < deadline, "the detail screen did not open"
            await pilot.pause(0.1)
        await pilot.pause(0.5)
        assert app.screen.job_id == job_id
        text = plain(app.screen.query_one("#detail-body").content)
        assert "blob" in text
        assert len(text) < 1_000_000, "the whole 5 MB payload was rendered"
        assert "\x1b" not in text
        assert time.monotonic() - started < 10
        await pilot.press("escape")
        assert not isinstance(app.screen, DetailScreen)


async def test_filter_matches_payload_text_and_keys(dsn: str) -> None:
    [acme] = seed_stuck(dsn, "billing", 1, payload={"customer": "acme", "invoice": 1})
    [globex] = seed_stuck(dsn, "billing", 1, payload={"customer": "globex", "refund": 2})
    async with dashboard(dsn) as (app, pilot):
        stuck = app.panel("stuck")
        assert stuck.row_count == 2
        await pilot.press("slash", *"globex")
        await pilot.pause()
        assert ids(stuck) == [globex]
        await pilot.press("escape")
        await pilot.press("slash", *"invoice")  # a key
        await pilot.pause()
        assert ids(stuck) == [acme]


def ids(table) -> list[int]:  # type: ignore[no-untyped-def]
    """The job id of each row (the first all-digit cell; the mark column comes before it)."""
    return [next(int(c) for c in row if c.strip().isdigit()) for row in cells(table)]
