"""The poll's statements planned before the server answers, so that they go in one round trip with
the server row and the table check (monitor/collect.py). They need the table's oid and size and the
server's clock (the timestamps' and the counters' windows end at it): the last polls' are the guess.
Each statement is keyed by its parameters, so a guess that missed only sends what it planned wrong
again, planned on the truth."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

# How far behind the guessed server clock a poll planned ahead ends its time windows (the counters'
# seconds, the timestamps' window): more than the round trip's jitter, so that it is never ahead.
AHEAD_MARGIN = timedelta(milliseconds=50)
# A guess further behind than this (a client paused, a server clock stepped) is not used: the windowed
# statements go again on the server's own now.
AHEAD_MAX_BEHIND = timedelta(seconds=1)
# The polls whose clock origins the guess takes the earliest of: enough to outlast a busy spell, few
# enough to follow the two clocks' drift (ppm: microseconds over 16 polls).
ORIGINS_KEPT = 16


def guessed_right(clock: datetime, now: datetime, last: datetime | None) -> bool:
    """A poll's windows may end at the guessed `clock`: not after the server's `now`, not far behind
    it, and not before the previous poll's windows ended (`last`), so that the windows tile.

    >>> from datetime import timezone
    >>> now = datetime(2026, 1, 1, 12, 0, 5, tzinfo=timezone.utc)
    >>> ms = lambda n: timedelta(milliseconds=n)
    >>> guessed_right(now - ms(52), now, now - ms(1000)), guessed_right(now + ms(1), now, None)
    (True, False)
    >>> guessed_right(now - ms(1500), now, None), guessed_right(now - ms(52), now, now - ms(10))
    (False, False)
    """
    return now - AHEAD_MAX_BEHIND <= clock <= now and (last is None or clock >= last)


@dataclass(frozen=True)
class Ahead:
    """What the next poll plans its statements on before the server answers, so that they go in the
    round trip of the server row and the table check: the table's oid, and the server's clock as
    `origin`, its now() at our monotonic clock's 0 (its now() in a round trip, less our monotonic
    time when that was sent). A parameter the guess got wrong (a window's end, a moved table) only
    sends that statement again."""

    origin: datetime
    oid: int

    def now_at(self, sent: float) -> datetime:
        """The server's now() in a round trip sent at `sent`, less a margin: a time window planned on
        it must not end after the server's now (collect() checks it did not)."""
        return self.origin + timedelta(seconds=sent) - AHEAD_MARGIN


def clock_origin(origins: Sequence[datetime]) -> datetime:
    """The server clock's origin to plan on, from the last polls' (now() less the monotonic time
    sent): the earliest, the one whose statements waited least between our send and the server's
    now(). A poll whose own wait was long (a busy server, a stalled link) then makes no later guess
    run ahead of the server's clock.

    >>> from datetime import timezone
    >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> clock_origin([t + timedelta(milliseconds=ms) for ms in (3, 1, 80)]) == t + timedelta(milliseconds=1)
    True
    """
    return min(origins)
