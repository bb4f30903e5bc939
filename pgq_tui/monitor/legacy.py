"""Snapshot JSON written before 0.2 (CHANGELOG.md), read with today's names.

Until 0.1 the Snapshot said `expired` for the stuck jobs and `failed` for the dead ones; since 0.2 it
says the dialect contract's words, `stuck` and `dead`. A recording made by an older pgq-top (or a
saved `snapshot --json`) still reads: `Snapshot.from_dict` maps the old keys first. Pure.
"""

from __future__ import annotations

from typing import Any

OLD_NAMES = {"expired": "stuck", "failed": "dead"}  # old count / list name -> today's


def _renamed(d: dict[str, Any]) -> dict[str, Any]:
    """The dict with its old keys renamed; a today's key already present wins (a "dead" panel in
    `unsupported` and the old "failed" count said the same: the kind has no dead jobs).

    >>> _renamed({"ready": 1, "expired": 2, "failed": 3})
    {'ready': 1, 'stuck': 2, 'dead': 3}
    >>> _renamed({"dead": "no dead list", "failed": "no dead state"})
    {'dead': 'no dead list'}
    """
    out: dict[str, Any] = {}
    for key, value in d.items():
        new = OLD_NAMES.get(key, key)
        if new not in out or new == key:
            out[new] = value
    return out


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """A `Snapshot.to_dict()` document with the pre-0.2 keys mapped to today's; a current one is
    returned as it is (a new dict, the input is not changed).

    >>> old = {"expired": {"rows": [], "total": 0}, "unknown": {"failed": "timeout"},
    ...        "queues": [{"queue": "q", "expired": 1, "failed": 2, "figures": {"failed": {}}}]}
    >>> new = upgrade(old)
    >>> sorted(new), new["unknown"]
    (['queues', 'stuck', 'unknown'], {'dead': 'timeout'})
    >>> new["queues"][0]
    {'queue': 'q', 'stuck': 1, 'dead': 2, 'figures': {'dead': {}}}
    >>> upgrade(new) == new
    True
    """
    if "expired" not in data and not _old_queues(data):
        return dict(data)
    out = dict(data)
    if "expired" in out:
        out["stuck"] = out.pop("expired")
    for key in ("unknown", "unsupported"):
        if isinstance(out.get(key), dict):
            out[key] = _renamed(out[key])
    out["queues"] = [_queue(q) for q in out.get("queues") or ()]
    return out


def _old_queues(data: dict[str, Any]) -> bool:
    return any(isinstance(q, dict) and ("expired" in q or "failed" in q) for q in data.get("queues") or ())


def _queue(q: Any) -> Any:
    if not isinstance(q, dict):
        return q
    out = _renamed(q)
    if isinstance(out.get("figures"), dict):
        out["figures"] = _renamed(out["figures"])
    return out
