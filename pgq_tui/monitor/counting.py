"""Counts per queue and state, each with how it was obtained. Pure: rows in, QueueStats out.

The poll reads every count through a partial index and stops at cap + 1 rows, so a count of at most
`cap` is exact at this poll. Above the cap the poll only knows "more than cap"; the figure is then the
background counter's exact value (stale, with its as_of), when it has one that still agrees with the
poll (above the cap), else the lower bound `cap` (at_least, shown "≥cap"). Nothing is ever sampled or
extrapolated: a number is exact, exact as of a stated time, or a stated lower bound.

Done rows (kept finished jobs) are read through the done index (finished_at), which has no queue
column: the poll reads at most cap + 1 of them over all queues, exact per queue when fewer came back.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from pgq_tui.monitor.background import BackgroundCount
from pgq_tui.monitor.snapshot import AT_LEAST, EXACT, STALE, Figure, QueueStats

Row = Mapping[str, Any]

# Each count, the background group that counts it, and the poll row kind that reads it.
GROUP = {
    "ready": "pending",
    "scheduled": "pending",
    "running": "running",
    "expired": "running",
    "failed": "failed",
    "done": "done",
}
DEPTH = ("ready", "scheduled", "running", "expired", "failed")  # every row not finished
POLL = "poll"  # capped index walk in this poll
BACKGROUND = "background"  # the background exact count


def poll_counts(rows: Iterable[Row]) -> dict[str, dict[str, int]]:
    """queue -> count name -> rows read by this poll (at most cap + 1 per queue and state, except
    done, whose cap + 1 is over all queues)."""
    out: dict[str, dict[str, int]] = defaultdict(dict)
    for r in rows:
        if r["kind"] == "done":
            out[r["queue"]]["done"] = int(r["n"])
            continue
        for name in ("ready", "scheduled", "running", "expired", "failed"):
            if r.get(name) is not None:
                out[r["queue"]][name] = int(r[name])
    return out


def over_cap(counts: Mapping[str, Mapping[str, int]], cap: int) -> frozenset[str]:
    """The background groups some count of which passed the cap at this poll.

    >>> sorted(over_cap({"a": {"ready": 11, "failed": 3}, "b": {"done": 6}}, 10))
    ['pending']
    >>> sorted(over_cap({"a": {"done": 6}, "b": {"done": 5}}, 10))
    ['done']
    """
    groups = {GROUP[n] for c in counts.values() for n, v in c.items() if n != "done" and v > cap}
    if sum(c.get("done", 0) for c in counts.values()) > cap:
        groups.add("done")
    return frozenset(groups)


def figure_for(
    name: str, read: int, cap: int, done_over: bool, bg: BackgroundCount | None, queue: str, now: datetime
) -> tuple[int, Figure]:
    """One count: the poll's exact read, else the background's stale value, else a lower bound.

    >>> from datetime import datetime, timezone
    >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> value, figure = figure_for("ready", 7, 10, False, None, "q", t); value, figure.accuracy
    (7, 'exact')
    >>> value, figure = figure_for("ready", 11, 10, False, None, "q", t); value, figure.accuracy
    (10, 'at_least')
    """
    capped = done_over if name == "done" else read > cap
    if not capped:
        return read, Figure(EXACT, now, POLL)
    floor = read if name == "done" else cap  # what the poll proved: done rows seen, or cap + 1 > cap
    value = bg.value(queue, name, GROUP[name]) if bg is not None else None
    if value is not None and value > floor:
        return value, Figure(STALE, bg.as_of, BACKGROUND)  # type: ignore[union-attr]
    return floor, Figure(AT_LEAST, now, POLL)


def queue_stats(
    rows: Sequence[Row],
    cap: int,
    now: datetime,
    bg: BackgroundCount | None,
    also: Iterable[str] = (),
) -> tuple[QueueStats, ...]:
    """Every queue seen by the poll (plus `also`, e.g. queues seen only in the rate window, listed
    with zeros), each count with its Figure."""
    counts = poll_counts(rows)
    done_over = sum(c.get("done", 0) for c in counts.values()) > cap
    oldest = {r["queue"]: r["oldest_ready_age_s"] for r in rows if r["kind"] == "pending"}
    queues = set(counts) | set(also)
    if done_over and bg is not None and "done" in bg.groups:
        queues |= {q for q, n in bg.counts if n == "done"}  # queues whose done rows the poll missed
    out = []
    for q in sorted(queues):
        values: dict[str, int] = {}
        figures: dict[str, Figure] = {}
        for name in GROUP:
            values[name], figures[name] = figure_for(
                name, counts.get(q, {}).get(name, 0), cap, done_over, bg, q, now
            )
        out.append(QueueStats(queue=q, **values, oldest_ready_age_s=oldest.get(q), figures=figures))
    return tuple(out)


def exact_depth(q: QueueStats) -> int | None:
    """Rows of the queue not finished (ready + scheduled + running + expired + failed), when every
    part is exact at this poll; None otherwise."""
    if any(q.accuracy(n) != EXACT for n in DEPTH):
        return None
    return sum(getattr(q, n) for n in DEPTH)


def background_depth(bg: BackgroundCount, queue: str) -> int | None:
    """The queue's depth in one background count, when that count covered every state of it."""
    if not {"pending", "running", "failed"} <= bg.groups:
        return None
    return sum(bg.counts.get((queue, n), 0) for n in DEPTH)
