"""`pgq-top replay FILE`: the same dashboard over a recording, with a time cursor.

The app is PgqTopApp with the recording as its snapshot source (history.replay.ReplaySource): no
timer polls it; the replay keys move the cursor and render the poll there. Every key that writes,
drives the demo or polls a server is absent (not greyed out) and so missing from the help.
"""

from __future__ import annotations

from rich.text import Text

from pgq_tui.history.replay import ReplaySource, fmt_time
from pgq_tui.history.store import RecordingError
from pgq_tui.tui import keys
from pgq_tui.tui.app import PgqTopApp
from pgq_tui.tui.format import safe
from pgq_tui.tui.screens.goto import GotoScreen
from pgq_tui.tui.widgets.chart import ThroughputChart


def replay_header(source: ReplaySource, target: str, version: str | None, database: str | None) -> Text:
    out = Text()
    out.append(" pgq-top ", style="bold reverse")
    out.append(" REPLAY ", style="bold reverse magenta")
    out.append(f" {fmt_time(source.time)}", style="bold")
    out.append(f"  {source.position()}", style="dim")
    if version:
        out.append(f"  PG {version}")
    if database:
        out.append(" ")
        out.append_text(safe(database, style="bold"))
    out.append("  ")
    out.append_text(safe(target))
    return out


class ReplayApp(PgqTopApp):
    BINDINGS = [*PgqTopApp.BINDINGS, *keys.REPLAY_BINDINGS]

    def __init__(self, source: ReplaySource, *, target: str) -> None:
        super().__init__(
            source, actions=None, target=target, read_only=True, poll=False, initial=source.collect()
        )
        self.replay = source

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in keys.NOT_IN_REPLAY:
            return False
        return super().check_action(action, parameters)

    def header_line(self) -> Text:
        snap = self.snapshot
        server = snap.server if snap is not None else None
        return replay_header(
            self.replay, self.target, server.version if server else None, server.database if server else None
        )

    def _render_snapshot(self) -> None:
        # the chart shows the polls before the cursor, not the ones the app happened to render
        chart = self.query_one(ThroughputChart)
        chart.history = self.replay.history()
        chart.show_until(self.replay.time)
        super()._render_snapshot()

    def _moved(self, moved: bool, end: str) -> None:
        if moved:
            self._tick(force=True)
        else:
            self.notify(f"at the {end} of the recording", timeout=2)
        self._update_header()

    def action_step(self, polls: int) -> None:
        self._moved(self.replay.step(polls), "end" if polls > 0 else "start")

    def action_jump(self, seconds: float) -> None:
        self._moved(self.replay.jump(seconds), "end" if seconds > 0 else "start")

    def action_go_to(self) -> None:
        def chosen(text: str | None) -> None:
            if not text:
                return
            try:
                self.replay.go(text)
            except RecordingError as exc:
                self.notify(str(exc), severity="error", timeout=5)
                return
            self._moved(True, "")

        self.push_screen(GotoScreen(fmt_time(self.replay.time)), chosen)
