"""Dashboard behaviour that needs no database: a fixed Snapshot source, driven through Pilot."""

from __future__ import annotations

import dataclasses

from test_tui_app import plain
from test_tui_sample import HOSTILE, make_snapshot
from textual import events

from pgq_tui.tui.app import PgqTopApp, step_interval
from pgq_tui.tui.screens.detail import DetailScreen, detail_renderable
from pgq_tui.tui.widgets.table import PanelTable


def app_on(snapshots: list, **kwargs: object) -> PgqTopApp:  # type: ignore[type-arg]
    """An app whose source returns the given snapshots in turn (the last one forever)."""
    it = iter(snapshots)
    last = {"snap": snapshots[0]}

    def collect():  # type: ignore[no-untyped-def]
        last["snap"] = next(it, last["snap"])
        return last["snap"]

    return PgqTopApp(collect, clock=lambda: 0.0, interval=60, **kwargs)  # type: ignore[arg-type]


async def test_a_failed_panel_keeps_its_last_rows_and_says_stale() -> None:
    good = make_snapshot()
    bad = dataclasses.replace(
        good,
        sessions=dataclasses.replace(good.sessions, idle_in_transaction=()),
        errors={"sessions": "canceling statement due to statement timeout"},
    )
    app = app_on([good, bad])
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.3)
        sessions: PanelTable = app.panel("sessions")
        before = sessions.row_count
        app.action_refresh()
        await pilot.pause(0.3)
        assert app.received == 2
        assert sessions.has_class("-stale") and "statement timeout" in str(sessions.border_subtitle)
        assert sessions.row_count == before  # last good rows kept, not emptied
        assert not app.panel("queues").has_class("-stale")


async def test_marks_survive_a_refresh_and_act_on_marked_rows() -> None:
    app = app_on([make_snapshot()])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.3)
        await pilot.press("2", "space", "down", "space")
        stuck: PanelTable = app.panel("stuck")
        assert stuck.targets() == [77, 91]  # rows 1 and 3 (space moves down, like htop)
        app.action_refresh()
        await pilot.pause(0.3)
        assert stuck.targets() == [77, 91]
        await pilot.press("escape")  # clears marks: the cursor row is the target again
        assert stuck.targets() == [91]


async def test_hostile_text_in_tables_is_literal() -> None:
    app = app_on([make_snapshot()])
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.3)
        dead = [str(c) for c in app.panel("dead").get_row_at(1)]
        assert any("[bold red]pwned[/]" in c and "\\e[31m" in c for c in dead)
        svg = app.export_screenshot()
        assert "pwned" in svg and "\x1b" not in svg


def test_detail_renders_untrusted_fields_as_text() -> None:
    text = plain(
        detail_renderable(
            {
                "id": 1,
                "queue": HOSTILE,
                "last_error": "Traceback\n  \x1b[2J boom",
                "payload": {"k": HOSTILE},
                "attempts": 1,
                "max_attempts": 5,
            }
        )
    )
    assert "[bold red]pwned[/]" in text and "\x1b" not in text
    assert "Traceback" in text and "\\e[2J boom" in text  # a traceback keeps its lines


async def test_detail_without_a_database_says_so() -> None:
    app = app_on([make_snapshot()])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.3)
        await pilot.press("2", "enter")
        await pilot.pause(0.2)
        assert isinstance(app.screen, DetailScreen)


async def test_interval_keys_and_small_terminal() -> None:
    assert step_interval(2.0, 1) == 5.0
    app = app_on([make_snapshot()])
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause(0.3)
        await pilot.press("plus")
        assert app.interval == 60.0  # the largest step
        await pilot.press("minus", "minus")
        assert app.interval < 60
        await pilot.press("tab", "tab", "7")
        assert app.current_panel == "health"


async def test_enter_on_a_queue_filters_to_it() -> None:
    app = app_on([make_snapshot()])
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.3)
        await pilot.press("1", "down", "enter")  # the second queue: reports
        assert app.filter_text == "queue:reports"  # exactly that queue
        assert [r.target for r in app.panel("stuck")._panel_rows.values()] == [91]
        await pilot.press("enter")
        assert app.filter_text == ""


async def test_a_poll_that_hangs_says_so_and_the_ui_stays_responsive() -> None:
    import threading

    release = threading.Event()
    now = [0.0]
    snap = make_snapshot()

    polling = threading.Event()

    def hanging():  # type: ignore[no-untyped-def]
        polling.set()
        release.wait(10)  # a silently dropped network: no error, no answer
        return snap

    app = PgqTopApp(hanging, clock=lambda: now[0], interval=1.0)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            for _ in range(200):  # the poll has started (seconds on a busy machine)
                if polling.is_set():
                    break
                await pilot.pause(0.05)
            assert polling.is_set(), "the first poll never started"
            now[0] = 20.0
            await pilot.press("question_mark")  # the UI still answers keys
            assert app.screen.__class__.__name__ == "HelpScreen"
            await pilot.press("escape")
            app._update_header()
            banner = app.query_one("#banner")
            assert banner.display and "no answer from the server for 20s" in plain(banner.content)
            release.set()
            await pilot.pause(0.3)
            # The answer arrives; a poll that came due meanwhile may follow at once (the source no
            # longer hangs), so at least one snapshot, and the banner is gone.
            assert app.received >= 1 and not banner.display
    finally:
        release.set()


def test_detail_times_are_relative_to_the_server_clock() -> None:
    from datetime import timedelta

    from test_tui_sample import NOW

    job = {"id": 7, "locked_until": NOW - timedelta(seconds=95), "run_at": NOW + timedelta(seconds=30)}
    text = plain(detail_renderable(job, NOW))
    assert "(1m35s ago)" in text and "(30s from now)" in text


async def test_a_number_key_then_enter_in_one_read_opens_the_new_panels_row() -> None:
    app = app_on([make_snapshot()])
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(200):  # the first snapshot is on screen
            if app.received:
                break
            await pilot.pause(0.05)
        assert app.received, "no snapshot arrived"
        app.post_message(events.Key("4", "4"))  # both queued before either is handled
        app.post_message(events.Key("enter", "\r"))
        for _ in range(100):  # both handled: well under a second, unless the machine is busy
            if isinstance(app.screen, DetailScreen):
                break
            await pilot.pause(0.05)
        assert isinstance(app.screen, DetailScreen) and app.screen.job_id == 501


async def test_typing_after_slash_goes_to_the_filter_not_to_the_keys() -> None:
    app = app_on([make_snapshot()])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.3)
        for key, char in [("slash", "/"), ("r", "r"), ("e", "e"), ("p", "p")]:
            app.post_message(events.Key(key, char))  # one read: all queued before any is handled
        await pilot.pause(0.3)
        assert app.filter_text == "rep"
        assert app.screen is app.screen_stack[0]  # no confirmation opened by `r`
        await pilot.press("ctrl+u", "9", "1", "slash")  # digits and "/" are text in the box, not keys
        assert app.filter_text == "91/"
        await pilot.press("backspace", "enter", "2")
        assert [r.target for r in app.panel("stuck")._panel_rows.values()] == [91]


async def test_enter_on_a_session_shows_all_of_it_literally() -> None:
    from pgq_tui.tui.screens.session import SessionScreen

    app = app_on([make_snapshot()])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.3)
        await pilot.press("5", "down", "enter")  # the idle-in-transaction session
        assert isinstance(app.screen, SessionScreen)
        text = plain(app.screen.query_one("#detail-body").content)
        assert "UPDATE accounts SET x = 1 WHERE id = 5" in text
        assert "[bold red]pwned[/]" in text and "\x1b" not in text
        await pilot.press("escape")
        assert not isinstance(app.screen, SessionScreen)


def test_the_readme_key_table_is_generated_from_the_bindings() -> None:
    from textual.binding import Binding

    from pgq_tui.tui import keys
    from pgq_tui.tui.screens.help import keys_markdown
    from pgq_tui.tui.screens.search import SearchScreen

    search = ("Search results (`/` with a search)", Binding.make_bindings(SearchScreen.BINDINGS))
    table = keys_markdown(Binding.make_bindings(PgqTopApp.BINDINGS), keys.TABLE_KEYS, [search])
    for binding in keys.BINDINGS:
        assert f"| {binding.description} |" in table, binding
    assert "| `r` | Requeue stuck |" in table and "| `K` | Terminate session |" in table


async def test_status_ticks_die_with_their_widgets() -> None:
    """Regression: the 1 s header tick was an app timer that queried the Header; during shutdown
    Textual removes the widgets before it stops the app's timers, so a tick could land in between
    (`NoMatches: No nodes match 'Header'`). Take every widget away, then let a tick come due:
    run_test re-raises anything a timer raised."""
    app = app_on([make_snapshot()])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.2)
        await app.screen.remove_children()
        await pilot.pause(1.3)


async def test_queue_marks_and_the_queue_detail_say_how_each_figure_was_obtained() -> None:
    from pgq_tui.tui.screens.queue import QueueScreen

    app = app_on([make_snapshot()])
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.3)
        queues: PanelTable = app.panel("queues")
        first = queues._panel_rows["q:emails"].cells
        assert plain(first[1]).strip() == "1.2k*"  # stale: the background count's exact value
        assert "* exact 4s ago" in plain(queues.border_subtitle)
        await pilot.press("1", "v")
        assert isinstance(app.screen, QueueScreen)
        body = plain(app.screen.query_one("#detail-body").content)
        assert "stale: exact count(*) by the background counter 4s ago" in body
        assert "exact: counted by this poll" in body and "background count: ready" in body
        await pilot.press("escape")
        assert not isinstance(app.screen, QueueScreen)
