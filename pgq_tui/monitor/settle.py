"""One-shot commands (`snapshot`, `check`) wait for the background counter, up to a budget.

A dashboard shows a background-served figure as "≥cap" or "?" until the background count lands and
then as stale with its age. A one-shot command has no later poll: it polls, waits (`--wait SECONDS`,
default DEFAULT_WAIT_S) until everything the poll left to the background counter has a value
(Monitor.settle), and polls again. Past the budget, every figure still owed says why in its reason:
"background count not finished within 10 s" (or the background count's error), never a made-up 0.
"""

from __future__ import annotations

import argparse
import dataclasses

from pgq_tui.monitor.cached import SOURCE as CACHED
from pgq_tui.monitor.counting import BACKGROUND, BACKGROUND_SCAN, FAILED, NOT_LANDED
from pgq_tui.monitor.snapshot import AT_LEAST, UNKNOWN, Figure, QueueStats, Snapshot

DEFAULT_WAIT_S = 10.0


def wait_seconds(text: str) -> float:
    """`--wait`: seconds, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds: {text!r}")
    return value


def add_wait_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--wait",
        type=wait_seconds,
        default=DEFAULT_WAIT_S,
        metavar="SECONDS",
        help="wait up to SECONDS for the background count of what the poll could not count itself; "
        f"past it those figures are unknown (null in JSON) with the reason (default: {DEFAULT_WAIT_S:g})",
    )


def not_finished(waited_s: float, error: str | None = None) -> str:
    """The reason a figure still owed by the background counter gives after the wait.

    >>> not_finished(10.0)
    'background count not finished within 10 s'
    >>> not_finished(2.5, "canceling statement due to statement timeout")
    'background count failed: canceling statement due to statement timeout'
    """
    if error:
        return f"{FAILED}{error}"
    return f"background count not finished within {waited_s:g} s"


def owed(figure: Figure) -> bool:
    """A figure the background counter still owes: a lower bound over the cap, unknown until its
    first background count (or background scan, for a state no index serves on a large table), or
    the framework's own count standing in for it meanwhile (seconds fresher is worth the wait; past
    the wait, that count stays, with its as_of)."""
    return (
        figure.accuracy == AT_LEAST
        or figure.source == CACHED
        or (figure.accuracy == UNKNOWN and figure.source in (BACKGROUND, BACKGROUND_SCAN))
    )


def past_wait(snap: Snapshot, waited_s: float) -> Snapshot:
    """The Snapshot with every figure still owed by the background counter saying why it is not
    exact: its own statement's error (each background statement fails on its own), else not finished
    within the wait, or the background counter's error. Pure."""
    error = snap.counts.error if snap.counts is not None else None
    why = not_finished(waited_s, error)

    def reason(f: Figure) -> str:
        if f.reason is not None and f.reason.startswith(FAILED):
            return f.reason
        # the framework's own count keeps its value: why it is not the background's, and whose it is
        return f"{why}; {f.reason}" if f.source == CACHED else why

    def mark(q: QueueStats) -> QueueStats:
        figures = {
            n: dataclasses.replace(f, reason=reason(f)) if owed(f) else f for n, f in q.figures.items()
        }
        return dataclasses.replace(q, figures=figures) if figures != q.figures else q

    # a figure owed by a background scan (a count, the oldest ready age) that has not landed yet
    unknown = {name: why if reason == NOT_LANDED else reason for name, reason in snap.unknown.items()}
    return dataclasses.replace(snap, queues=tuple(mark(q) for q in snap.queues), unknown=unknown)
