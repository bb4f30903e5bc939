"""Headline figures of one Snapshot, shared by `check`, the exporter and the fleet screen so the three
agree on what "the oldest ready job" or "the xmin horizon's age" is. Pure functions.

pgq-top's own sessions are left out of the session figures: the monitor is autocommit and holds no
transaction between statements, so it would only ever show as noise.
"""

from __future__ import annotations

from dataclasses import dataclass

from pgq_tui.monitor.snapshot import EXACT, QueueStats, Session, Snapshot, XminHolder

STATES = ("ready", "scheduled", "running", "stuck", "dead", "done")
# the Snapshot's field for each canonical state name (stuck = expired leases, dead = failed)
STATE_FIELD = {
    "ready": "ready",
    "scheduled": "scheduled",
    "running": "running",
    "stuck": "expired",
    "dead": "failed",
    "done": "done",
}


def state_count(q: QueueStats, state: str) -> int:
    return int(getattr(q, STATE_FIELD[state]))


def state_exact(q: QueueStats, state: str) -> bool:
    """Exact at this poll (not a stale background count, a lower bound or an estimate)."""
    return q.accuracy(STATE_FIELD[state]) == EXACT


@dataclass(frozen=True)
class Totals:
    ready: int
    scheduled: int
    running: int
    stuck: int
    dead: int
    estimated: bool  # some queue's count is not exact at this poll (stale, lower bound)


def totals(snap: Snapshot) -> Totals:
    """Sums over queues; `stuck` is the leases panel's true total when that panel answered."""
    qs = snap.queues
    stuck = snap.expired.total if "leases" not in snap.errors else sum(q.expired for q in qs)
    return Totals(
        ready=sum(q.ready for q in qs),
        scheduled=sum(q.scheduled for q in qs),
        running=sum(q.running for q in qs),
        stuck=stuck,
        dead=sum(q.failed for q in qs),
        estimated=any(q.approximate for q in qs),
    )


def oldest_ready(snap: Snapshot) -> tuple[str | None, float]:
    """The queue whose oldest ready job has waited longest, and that wait (0.0 when nothing waits)."""
    waiting = [q for q in snap.queues if q.oldest_ready_age_s is not None]
    q = max(waiting, key=lambda q: q.oldest_ready_age_s or 0.0, default=None)
    return (q.queue, q.oldest_ready_age_s or 0.0) if q else (None, 0.0)


def idle_in_transaction(snap: Snapshot) -> list[Session]:
    return [s for s in snap.sessions.idle_in_transaction if not s.is_pgq_top]


def oldest_idle_in_transaction(snap: Snapshot) -> Session | None:
    return max(idle_in_transaction(snap), key=lambda s: s.xact_age_s or 0.0, default=None)


def xmin_holders(snap: Snapshot) -> list[XminHolder]:
    return [h for h in snap.sessions.xmin_holders if not h.is_pgq_top]


def oldest_xmin_holder(snap: Snapshot) -> XminHolder | None:
    """The holder with the longest known hold (replication slots have no age in seconds)."""
    timed = [h for h in xmin_holders(snap) if h.age_s is not None]
    return max(timed, key=lambda h: h.age_s or 0.0, default=None)


def age_s(snap: Snapshot, when: object) -> float | None:
    """Seconds from a server timestamp to the snapshot's `now`; None for never."""
    if when is None:
        return None
    return max(0.0, (snap.server.now - when).total_seconds())  # type: ignore[operator]
