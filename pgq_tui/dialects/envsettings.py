"""Thresholds a dialect can't read from the database (a framework's worker-side timeouts), taken from
the environment so the operator can match their workers' configuration."""

from __future__ import annotations

import os


def seconds_from_env(name: str, default: float) -> float:
    """`name` as a positive number of seconds; `default` when unset, empty, not a number or <= 0."""
    raw = os.environ.get(name, "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        return default
    return value if value > 0 else default
