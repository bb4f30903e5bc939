"""What a queue's dialect can serve, read from `Snapshot.unsupported`: shared by `check`, the exporter
and the fleet rows, so all three leave out (never zero) the same figures. Pure functions.

`Snapshot.unsupported` maps a panel ("queues", "leases", "dead", "oldest_ready", ...) or a count
field ("ready", "stuck", "dead", ...) to why the dialect cannot serve it.
"""

from __future__ import annotations

from pgq_tui.monitor.figures import STATE_FIELD, totals
from pgq_tui.monitor.snapshot import Snapshot


def why_not(snap: Snapshot, *needs: str) -> str | None:
    """Why the dialect cannot serve a figure built from the counts and these panels or count fields,
    else None.

    >>> from pgq_tui.monitor.snapshot import Snapshot
    >>> snap = Snapshot.__new__(Snapshot)
    >>> object.__setattr__(snap, "unsupported", {"dead": "no dead state"})
    >>> why_not(snap, "dead"), why_not(snap, "stuck")
    ('no dead state', None)
    """
    for need in ("queues", *needs):
        if need in snap.unsupported:
            return snap.unsupported[need]
    return None


def state_served(snap: Snapshot, state: str) -> bool:
    """A canonical state's count (ready, scheduled, running, stuck, dead, done) is served."""
    return why_not(snap, STATE_FIELD[state]) is None


def stuck_total(snap: Snapshot) -> int | None:
    """Stuck by the framework's own rule: the leases panel's true total where the dialect lists its
    leases (and the panel answered), else the sum of the stuck counts (a dialect may count stuck
    jobs without listing them); None when a stuck count was not taken (unknown, never 0)."""
    return totals(snap).stuck
