"""Headline figures of one Snapshot, shared by `check`, the exporter and the fleet screen so the three
agree on what "the oldest ready job" or "the xmin horizon's age" is. Pure functions.

pgq-top's own sessions are left out of the session figures: the monitor is autocommit and holds no
transaction between statements, so it would only ever show as noise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from pgq_tui.dialects.contract import OLDEST_READY  # the QueueStats field, its figure's and unknown's key
from pgq_tui.monitor.snapshot import (
    EXACT,
    UNKNOWN,
    UNSUPPORTED,
    QueueStats,
    Session,
    Snapshot,
    XminHolder,
)

STATES = ("ready", "scheduled", "running", "stuck", "dead", "done")
# the Snapshot's field for each canonical state name (the same word since 0.2)
STATE_FIELD = {
    "ready": "ready",
    "scheduled": "scheduled",
    "running": "running",
    "stuck": "stuck",
    "dead": "dead",
    "done": "done",
}


def state_count(q: QueueStats, state: str) -> int | None:
    """The queue's count of a canonical state; None when it was not taken (never 0 for unknown)."""
    return q.count(STATE_FIELD[state])


def state_exact(q: QueueStats, state: str) -> bool:
    """Exact at this poll (not a stale background count, a lower bound, an estimate or unknown)."""
    return q.accuracy(STATE_FIELD[state]) == EXACT


def state_age_s(q: QueueStats, state: str, now: datetime) -> float:
    """How old the queue's count of a state is at `now`: 0 when taken at this poll (exact or a lower
    bound), else its figure's age (a background count's or scan's, or the framework's own count's).

    >>> from datetime import timedelta, timezone
    >>> from pgq_tui.monitor.snapshot import Figure
    >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> stale = {"ready": Figure("stale", t - timedelta(seconds=45), "cached")}
    >>> q = QueueStats("q", 40, 0, 0, 0, 0, 0, None, figures=stale)
    >>> state_age_s(q, "ready", t), state_age_s(q, "dead", t)
    (45.0, 0.0)
    """
    figure = q.figures.get(STATE_FIELD[state])
    age = figure.stale_age_s(now) if figure is not None else None
    return 0.0 if age is None else age


def unknown_why(snap: Snapshot, name: str) -> str | None:
    """Why the count `name` (a QueueStats field, e.g. "stuck") is not known for every queue at this
    poll: not taken for any queue (Snapshot.unknown), or unknown in some queue (its reason, naming
    the queue). None when every queue has a value (or the kind has no such state: unsupported())."""
    if name in snap.unknown:
        return snap.unknown[name]
    for q in snap.queues:
        figure = q.figures.get(name)
        if figure is not None and figure.accuracy == UNKNOWN:
            return f"queue {q.queue}: {figure.reason or 'not taken'}"
    return None


def not_recorded(snap: Snapshot, name: str) -> str | None:
    """Why the kind has no such state at all (nothing to count, never an alert), else None."""
    for q in snap.queues:
        figure = q.figures.get(name)
        if figure is not None and figure.accuracy == UNSUPPORTED:
            return figure.reason or UNSUPPORTED
    return None


def sum_known(qs: Sequence[QueueStats], name: str) -> int | None:
    """The sum of a count over queues; None when any queue's count is not taken."""
    values = [q.count(name) for q in qs]
    return None if any(v is None for v in values) else sum(v or 0 for v in values)


@dataclass(frozen=True)
class Totals:
    """Sums over queues; None where some queue's count was not taken (unknown is never zero)."""

    ready: int | None
    scheduled: int | None
    running: int | None
    stuck: int | None
    dead: int | None
    estimated: bool  # some queue's count is not exact at this poll (stale, lower bound)


def totals(snap: Snapshot) -> Totals:
    """Sums over queues; `stuck` is the leases panel's true total when that panel answered."""
    qs = snap.queues

    def total(name: str) -> int | None:
        return None if name in snap.unknown else sum_known(qs, name)

    listed = "leases" not in snap.errors and "leases" not in snap.unsupported
    listed = listed and unknown_why(snap, "stuck") is None
    return Totals(
        ready=total("ready"),
        scheduled=total("scheduled"),
        running=total("running"),
        stuck=snap.stuck.total if listed else total("stuck"),
        dead=total("dead"),
        estimated=any(q.approximate for q in qs),
    )


def oldest_accuracy(snap: Snapshot, q: QueueStats) -> str:
    """How the queue's oldest ready age was obtained: its figure's accuracy, else (a snapshot built by
    hand, or written before the age had a figure) unknown when the snapshot says it was not taken,
    unsupported when the kind has none, exact otherwise (None then means no job is ready)."""
    figure = q.figures.get(OLDEST_READY)
    if figure is not None:
        return figure.accuracy
    if OLDEST_READY in snap.unknown:
        return UNKNOWN
    return UNSUPPORTED if "oldest_ready" in snap.unsupported else EXACT


def oldest_ready(snap: Snapshot) -> tuple[str | None, float]:
    """The queue whose oldest ready job has waited longest, and that wait (0.0 when nothing waits).
    A queue known to be paused is left out: its jobs wait because it was paused, not for a worker."""
    waiting = [q for q in snap.queues if q.oldest_ready_age_s is not None and q.paused is not True]
    q = max(waiting, key=lambda q: q.oldest_ready_age_s or 0.0, default=None)
    return (q.queue, q.oldest_ready_age_s or 0.0) if q else (None, 0.0)


def idle_in_transaction(snap: Snapshot) -> list[Session]:
    return [s for s in snap.sessions.idle_in_transaction if not s.is_pgq_top]


def oldest_idle_in_transaction(snap: Snapshot) -> Session | None:
    return max(idle_in_transaction(snap), key=lambda s: s.xact_age_s or 0.0, default=None)


def xmin_holders(snap: Snapshot) -> list[XminHolder]:
    return [h for h in snap.sessions.xmin_holders if not h.is_pgq_top]


_REACH = {
    "database": "this db",
    "cluster": "every db",
    "other database": "other db: holds none of this db's rows",
    "catalog": "catalog_xmin only: WAL and catalog rows, not this db's dead tuples",
}


def holder_reach(h: XminHolder) -> str:
    """Whose dead tuples a holder can keep, in a few words for the sessions panels ("" unknown).

    >>> holder_reach(XminHolder("replication slot", "cdc", 9, None, "logical", scope="catalog"))
    "catalog_xmin only: WAL and catalog rows, not this db's dead tuples"
    """
    return _REACH.get(h.scope or "", "")


def oldest_xmin_holder(snap: Snapshot) -> XminHolder | None:
    """The holder with the longest known hold among those that can hold this database's tables (a
    transaction in another database cannot; replication slots have no age in seconds)."""
    timed = [h for h in xmin_holders(snap) if h.age_s is not None and h.holds_tables]
    return max(timed, key=lambda h: h.age_s or 0.0, default=None)


def age_s(snap: Snapshot, when: datetime | None) -> float | None:
    """Seconds from a server timestamp to the snapshot's `now`; None for never."""
    if when is None:
        return None
    return max(0.0, (snap.server.now - when).total_seconds())
