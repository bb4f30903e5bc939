"""One-line status widgets: the header, the disconnect banner, the verdict line and the demo line."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.widgets import Static

from pgq_tui.diagnosis import Chain, one_line
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.tui.format import LEVEL_MARK, LEVEL_STYLE, fmt_age, fmt_rate, safe
from pgq_tui.tui.quiet import update_static
from pgq_tui.tui.verdict import verdict_text


@dataclass(frozen=True)
class Connection:
    """What the header needs besides the Snapshot; built by the app on each tick."""

    target: str  # schema.table
    interval_s: float
    paused: bool
    connected: bool | None  # None: first poll still in flight
    data_age_s: float | None
    read_only: bool
    error: str | None = None
    waiting_s: float = 0.0  # how long the poll in flight has been waiting for the server
    poll_ms: float | None = None  # the poll time to show (steady_poll_ms); None: the snapshot's own


def steady_poll_ms(shown: float | None, measured: float) -> float:
    """The poll time the header shows: the one shown until a poll takes under half or over 1.5 times
    as long, then the new one to two significant digits. Poll times jitter (19, 38, 25 ms): showing
    each one repaints the header every second for nothing; a real change still shows at once.

    >>> steady_poll_ms(None, 19.4), steady_poll_ms(19, 25), steady_poll_ms(19, 38), steady_poll_ms(19, 9)
    (19.0, 19, 38.0, 9.0)
    >>> steady_poll_ms(None, 248.7), steady_poll_ms(250, 1234.0)
    (250.0, 1200.0)
    """
    if shown is not None and shown / 2 <= measured <= shown * 1.5:
        return shown
    return float(f"{measured:.2g}")


def header_text(snap: Snapshot | None, c: Connection) -> Text:
    out = Text()
    out.append(" pgq-top ", style="bold reverse")
    if snap is not None:
        s = snap.server
        out.append(" PG ")
        out.append_text(safe(s.version))
        out.append(" ")
        out.append_text(safe(s.database, style="bold"))
        if s.in_recovery:
            out.append(" (replica)", style="yellow")
    out.append(" ")
    out.append_text(safe(c.target))
    if c.connected is None:
        out.append("  ◌ connecting…", style="yellow")
    elif c.connected:
        out.append("  ● up", style="green")
    else:
        out.append("  ✖ DOWN", style="bold red")
    if c.waiting_s >= max(5.0, 2 * c.interval_s):
        out.append(f"  ⌛ {fmt_age(int(c.waiting_s))}", style="bold yellow")
    if c.paused:
        out.append("  ⏸ PAUSED", style="bold yellow")
    else:
        out.append(f"  every {c.interval_s:g}s")
    if c.data_age_s is not None:
        old = c.data_age_s > 2 * c.interval_s + 1
        out.append(f"  data {fmt_age(int(c.data_age_s))} old", style="bold yellow" if old else "")
    if snap is not None:
        poll = c.poll_ms if c.poll_ms is not None else snap.server.collect_ms
        out.append(f"  poll {poll:.0f}ms", style="dim")
    if c.read_only:
        out.append("  READ-ONLY", style="bold cyan")
    return out


def banner_text(c: Connection) -> Text:
    age = f"; data below is {fmt_age(int(c.data_age_s))} old (stale)" if c.data_age_s is not None else ""
    if c.connected is not False:  # connected, but the poll hangs: a network that dropped silently
        return Text(
            f" no answer from the server for {fmt_age(int(c.waiting_s))}{age}; still waiting", style="bold"
        )
    text = Text(f" disconnected — retrying every {c.interval_s:g}s{age}: ", style="bold")
    text.append_text(safe(c.error or "no answer", limit=200))
    return text


def demo_text(status: Any) -> Text:
    """The demo line (duck-typed on demo.DemoStatus so the tui does not depend on its internals)."""
    out = Text(" demo ", style="bold reverse magenta")
    workers = getattr(status, "workers", "?")
    rate = getattr(status, "rate", None)
    out.append(f" {workers} workers")
    restarts = getattr(status, "restarts", 0)
    if restarts:
        out.append(f" ({restarts} replaced)", style="yellow")
    out.append(f"  load {fmt_rate(rate) if isinstance(rate, int | float) else '?'}")
    share = getattr(status, "fail_share", None)
    if isinstance(share, int | float):
        out.append(f"  fail {share:.0%}")
    if getattr(status, "slow", False):
        out.append("  SLOW", style="bold yellow")
    pid = getattr(status, "idle_tx_pid", None)
    if pid:
        out.append(f"  idle-tx pid {pid}", style="bold yellow")
    out.append("   keys: w W l L x i s", style="dim")
    return out


class _Ticking(Static):
    """A line that re-renders itself every second from `state` (ages keep moving while a poll waits).

    The timer is the widget's own, so it stops when the widget is removed. An app-level timer that
    queried these widgets kept firing while Textual tore the screen down (`NoMatches: Header` during
    shutdown, a crash on quit); a widget's tick touches only itself.
    """

    def __init__(self, state: Callable[[], Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._state = state

    def on_mount(self) -> None:
        self.tick()
        self.set_interval(1.0, self.tick)

    def tick(self) -> None:
        self.show(self._state())

    def show(self, state: Any) -> None:
        raise NotImplementedError


class Header(_Ticking):
    def show(self, text: Text) -> None:
        update_static(self, text)  # one fixed line: only when it changed, and no layout pass


class Banner(_Ticking):
    """Shown while disconnected or while a poll hangs; `state` gives None otherwise."""

    def show(self, c: Connection | None) -> None:
        self.display = c is not None
        if c is not None:
            update_static(self, banner_text(c), layout=True)  # its height follows the text


class VerdictLine(Static):
    def update_from(
        self,
        snap: Snapshot,
        filter_text: str = "",
        chains: Sequence[Chain] = (),
        hide_keys: Collection[str] = (),
    ) -> None:
        text = Text("health: ", style="bold")
        if chains:  # the diagnosis: the worst chain, its root and fix kept whole (`y` shows them all)
            text.append_text(chain_text(chains, (self.size.width or 80) - len(text), hide_keys))
        else:
            text.append_text(verdict_text(snap))
        update_static(self, text)


def chain_text(chains: Sequence[Chain], width: int, hide_keys: Collection[str] = ()) -> Text:
    """The worst chain on one line of `width` cells, then how many more and the key that lists them;
    a fix key in `hide_keys` (a write key, with --read-only) is not offered."""
    worst = chains[0]
    mark = f"{LEVEL_MARK[worst.level]} "
    more = f" +{len(chains) - 1}" if len(chains) > 1 else ""
    hint = f"{more} [y]"
    line = one_line(worst, max(width - len(mark) - len(hint), 10), hide_keys)
    text = safe(mark + line, style=LEVEL_STYLE[worst.level])
    text.append(hint, style="dim")
    return text


class DemoBar(Static):
    def show(self, status: Any) -> None:
        update_static(self, demo_text(status))
