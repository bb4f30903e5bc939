"""Short ages for schedule lines ("26h", "3m05s"): the schedules package sits below the monitor, so
it keeps its own."""

from __future__ import annotations


def age(seconds: float) -> str:
    """A duration in one or two units.

    >>> age(93600), age(185), age(42.4), age(90000 * 3)
    ('26h', '3m05s', '42s', '3d03h')
    """
    s = round(max(seconds, 0.0))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 48 * 3600:
        h, m = divmod(s // 60, 60)
        return f"{h}h" if m == 0 else f"{h}h{m:02d}m"
    d, h = divmod(s // 3600, 24)
    return f"{d}d" if h == 0 else f"{d}d{h:02d}h"
