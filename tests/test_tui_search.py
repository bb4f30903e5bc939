"""The dashboard's search panel and its bulk actions, driven with Textual's pilot against a real server
(issue #32): `/` with a search lists the matches and says what it searched, a bad term is one line,
escape clears; a bulk retry shows progress, stops between batches on `s` with the database holding
exactly the reported number, and a second run finishes the rest; --read-only has no bulk key."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import psycopg
from actions_support import pgq_actions
from monitor_support import pgq_monitor
from textual.widgets import DataTable, ProgressBar

from pgq_tui.audit import AuditLog
from pgq_tui.queue import JobQueue
from pgq_tui.tui import keys
from pgq_tui.tui.app import PgqTopApp
from pgq_tui.tui.screens.confirm import ConfirmScreen
from pgq_tui.tui.screens.search import SearchScreen
from tests.test_tui_app import plain, settle

REFUSED = 'error:~"connection refused" state:dead'
# A test-only trigger that makes each batch's UPDATE take a while, so `s` lands between batches.
SLOW = """
CREATE FUNCTION slow_batch() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN PERFORM pg_sleep(0.15); RETURN NULL; END $$;
CREATE TRIGGER slow_batch BEFORE UPDATE ON jobs FOR EACH STATEMENT EXECUTE FUNCTION slow_batch();
"""


def _incident(queue: JobQueue, sql: psycopg.Connection, refused: int, card: int) -> dict[str, list[int]]:
    ids = queue.enqueue("payments", [{"customer": {"id": i}} for i in range(refused + card + 5)])
    fail = "UPDATE jobs SET status = 'failed', last_error = %s, finished_at = now() WHERE id = ANY(%s)"
    sql.execute(fail, ("[bold]x[/] connection refused", ids[:refused]))
    sql.execute(fail, ("CardError: invalid card", ids[refused : refused + card]))
    return {"refused": ids[:refused], "card": ids[refused : refused + card]}


def _pending(sql: psycopg.Connection, ids: list[int]) -> int:
    query = "SELECT count(*) FROM jobs WHERE status = 'pending' AND id = ANY(%s)"
    row = sql.execute(query, (ids,)).fetchone()
    assert row is not None
    return int(row[0])


@asynccontextmanager
async def dashboard(dsn: str, tmp_path: Path, *, read_only: bool = False, batch: int = 1000) -> AsyncIterator:  # type: ignore[type-arg]
    monitor = pgq_monitor(dsn, read_only=read_only)
    actions = pgq_actions(dsn, read_only=read_only, batch=batch, audit=AuditLog(tmp_path / "audit.jsonl"))
    app = PgqTopApp(monitor, actions=actions, interval=1.0, read_only=read_only)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot, app)
            yield app, pilot
    finally:
        actions.close()
        monitor.close()


async def _wait(pilot, what, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.05)


async def _search(app: PgqTopApp, pilot, text: str) -> SearchScreen:  # type: ignore[no-untyped-def]
    await pilot.press("slash", *text, "enter")
    await _wait(pilot, lambda: isinstance(app.screen, SearchScreen) and app.screen.result is not None)
    screen = app.screen
    assert isinstance(screen, SearchScreen)
    return screen


async def test_slash_search_lists_the_matches_and_says_what_it_searched(
    dsn: str, queue: JobQueue, sql: psycopg.Connection, tmp_path: Path
) -> None:
    jobs = _incident(queue, sql, refused=12, card=3)
    async with dashboard(dsn, tmp_path) as (app, pilot):
        await pilot.press("4")  # the dead jobs panel
        screen = await _search(app, pilot, REFUSED)
        assert app.filter_text == ""  # a search does not narrow the panels as a text filter
        table = screen.query_one("#search-rows", DataTable)
        listed = sorted(int(str(table.get_row_at(i)[0])) for i in range(table.row_count))
        assert listed == sorted(jobs["refused"])
        summary = plain(screen.query_one("#search-summary").content)
        assert "all 15 dead jobs searched (through index jobs_dead_idx); 12 match" in summary
        assert "[bold]x[/]" in plain(table.get_row_at(0)[4])  # untrusted error text, shown literally
        await pilot.press("escape")  # clears the search: back to the dashboard
        await pilot.pause()
        assert app.screen is app.screen_stack[0]
        # a bad term: one line, the box stays open to fix it, nothing else opens
        await pilot.press("slash", *"state:dead!", "enter")
        await pilot.pause(0.3)
        assert app.screen is app.screen_stack[0]
        (note,) = [n for n in app._notifications if "state:dead!" in n.message]
        assert "\n" not in note.message and "a state is a word" in note.message
        await pilot.press("escape")
        # a bare word is still the live text filter, and queue:NAME the exact queue filter
        await pilot.press("slash", *"pay", "enter")
        assert app.filter_text == "pay" and app.screen is app.screen_stack[0]


async def test_a_term_the_kind_cannot_serve_is_one_line_in_the_panel(
    dsn: str, queue: JobQueue, sql: psycopg.Connection, tmp_path: Path
) -> None:
    _incident(queue, sql, refused=2, card=1)
    async with dashboard(dsn, tmp_path) as (app, pilot):
        await pilot.press("slash", *"state:dead meta.x:1", "enter")
        await _wait(pilot, lambda: isinstance(app.screen, SearchScreen) and app.screen.error is not None)
        screen = app.screen
        assert isinstance(screen, SearchScreen) and screen.result is None
        line = plain(screen.query_one("#search-summary").content).strip()
        assert "'meta.x:1'" in line and "\n" not in line


async def test_bulk_retry_shows_progress_stops_halfway_and_a_second_run_finishes(
    dsn: str, queue: JobQueue, sql: psycopg.Connection, tmp_path: Path
) -> None:
    jobs = _incident(queue, sql, refused=300, card=40)
    sql.execute(SLOW)
    async with dashboard(dsn, tmp_path, batch=20) as (app, pilot):
        screen = await _search(app, pilot, REFUSED)
        assert screen.result is not None and screen.result.matched == 300
        await pilot.press("t")
        await _wait(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        confirm = app.screen
        assert isinstance(confirm, ConfirmScreen)
        body = plain(confirm.query_one("#confirm-body").content, width=200)
        assert "will change at most 300 jobs" in body
        assert "connection refused" in confirm.plan.description  # the search, quoted in the plan
        assert "FOR UPDATE OF j SKIP LOCKED" in confirm.plan.sql  # the search re-checked as the guard
        assert "position(lower(%(w0)s::text)" in confirm.plan.sql
        await pilot.press("y")
        bar = screen.query_one("#search-progress", ProgressBar)
        await _wait(pilot, lambda: (bar.progress or 0) >= 60)
        assert bar.display and bar.total == 300
        rate = plain(screen.query_one("#search-rate").content)
        assert "of ~300" in rate and "/s" in rate and "ETA" in rate
        await pilot.press("s")
        await _wait(pilot, lambda: screen.running is None)
        outcome = screen.outcome
        assert outcome is not None and outcome.stopped
        assert 60 <= outcome.changed < 300
        # the database holds exactly the reported number; the card errors were never touched
        assert _pending(sql, jobs["refused"]) == outcome.changed
        assert _pending(sql, jobs["card"]) == 0
        assert screen.last is not None
        assert screen.last.startswith(f"retried {outcome.changed:,} of 300 matching jobs")
        assert f"stopped: {300 - outcome.changed:,} not touched" in screen.last
        end = json.loads((tmp_path / "audit.jsonl").read_text().splitlines()[-1])
        assert end["event"] == "end" and end["changed"] == outcome.changed and end["where"] == REFUSED
        # the search ran again: the rest still match; a second run finishes them
        first = outcome.changed
        await _wait(pilot, lambda: screen.result is not None and screen.result.matched == 300 - first)
        await pilot.press("t")
        await _wait(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await _wait(pilot, lambda: screen.outcome is not outcome and screen.running is None, timeout=30)
        assert screen.outcome is not None and screen.outcome.changed == 300 - first
        assert not screen.outcome.stopped and screen.outcome.error is None
        assert _pending(sql, jobs["refused"]) == 300 and _pending(sql, jobs["card"]) == 0
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [(r["event"], r.get("changed")) for r in records] == [
        ("start", None),
        ("end", first),
        ("start", None),
        ("end", 300 - first),
    ]


async def test_read_only_search_works_and_has_no_bulk_key(
    dsn: str, queue: JobQueue, sql: psycopg.Connection, tmp_path: Path
) -> None:
    jobs = _incident(queue, sql, refused=5, card=1)
    async with dashboard(dsn, tmp_path, read_only=True) as (app, pilot):
        screen = await _search(app, pilot, REFUSED)
        assert screen.result is not None and screen.result.matched == 5
        active = {ab.binding.action for ab in screen.active_bindings.values()}
        assert not any(a.startswith("bulk") for a in active)
        await pilot.press("t")
        await pilot.pause(0.3)
        assert app.screen is screen
        assert any(n.message == keys.READ_ONLY_REFUSAL for n in app._notifications)
        assert _pending(sql, jobs["refused"]) == 0
    assert not (tmp_path / "audit.jsonl").exists()
