"""Retry delays: exponential backoff with full jitter (pure, so it tests without a database)."""

from __future__ import annotations

import random


def backoff_seconds(
    attempts: int,
    *,
    base: float = 1.0,
    cap: float = 3600.0,
    rng: random.Random | None = None,
) -> float:
    """Delay before the next try after `attempts` failed tries.

    Full jitter (a uniform draw in [exp/2, exp]) keeps a burst of failures from retrying in lockstep,
    while still guaranteeing the delay grows: exp = min(cap, base * 2 ** (attempts - 1)).

    >>> backoff_seconds(1, rng=random.Random(0)) <= 1.0
    True
    >>> 4.0 <= backoff_seconds(4, rng=random.Random(0)) <= 8.0
    True
    >>> backoff_seconds(100, cap=60, rng=random.Random(0)) <= 60
    True
    """
    exp = min(cap, base * 2.0 ** max(0, min(attempts - 1, 62)))
    draw = rng.random() if rng is not None else random.random()
    return exp / 2 + draw * exp / 2
